"""Output files never destroy an input, never write into a non-regular file, and replace a
target atomically from an unpredictable temp file (issue 13, item 1)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from viewer.export import files
from viewer.export.files import OutputRefused, open_output, write_output


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "run.log"
    path.write_bytes(b"TIMELINE,0,SYNTH_START,j,partition=0\n")
    return path


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize("how", ["same path", "symlink", "hard link", "symlinked folder"])
def test_an_input_is_never_an_output(log: Path, tmp_path: Path, how: str) -> None:
    before = log.read_bytes()
    out = log
    if how == "symlink":
        out = tmp_path / "out.json"
        out.symlink_to(log)
    elif how == "hard link":
        out = tmp_path / "out.json"
        os.link(log, out)
    elif how == "symlinked folder":
        (tmp_path / "alias").symlink_to(tmp_path)
        out = tmp_path / "alias" / log.name
    with pytest.raises(OutputRefused, match=r"run\.log") as err:
        write_output(out, "{}", inputs=[log])
    assert "input" in str(err.value)
    assert log.read_bytes() == before
    assert not [n for n in _names(tmp_path) if n.endswith(".tmp")]


def test_an_input_given_through_a_link_is_recognised(log: Path, tmp_path: Path) -> None:
    link = tmp_path / "latest.log"
    link.symlink_to(log)
    with pytest.raises(OutputRefused):
        write_output(log, "x", inputs=[link])
    assert log.read_bytes().startswith(b"TIMELINE")


def test_fifo_directory_and_device_are_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    with pytest.raises(OutputRefused, match="FIFO"):
        write_output(fifo, "{}")  # would block forever if it were opened
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    folder = tmp_path / "folder.json"
    folder.mkdir()
    with pytest.raises(OutputRefused, match="directory"):
        write_output(folder, "{}")
    assert folder.is_dir()


@pytest.mark.skipif(os.geteuid() != 0, reason="creating a device node needs root")
def test_a_device_is_never_replaced_even_as_root(tmp_path: Path) -> None:
    null = tmp_path / "null"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    with pytest.raises(OutputRefused, match="device"):
        write_output(null, "{}")
    assert stat.S_ISCHR(os.lstat(null).st_mode)


def test_symlink_loop_is_named(tmp_path: Path) -> None:
    loop = tmp_path / "loop.json"
    loop.symlink_to(loop)
    with pytest.raises(OutputRefused, match="symlink loop"):
        write_output(loop, "{}")
    assert loop.is_symlink()


def test_a_planted_temp_symlink_is_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "trace.json"
    for name in (f".{out.name}.tmp", f"{out.name}.tmp", f".{out.name}.swp"):
        (tmp_path / name).symlink_to(victim)
    write_output(out, "{}")
    assert victim.read_text() == "precious"
    assert out.read_text() == "{}"
    assert not out.is_symlink()


def test_existing_mode_is_kept_and_new_files_follow_the_umask(tmp_path: Path) -> None:
    out = tmp_path / "shared.csv"
    out.write_text("old")
    out.chmod(0o640)
    write_output(out, "new")
    assert out.read_text() == "new" and stat.S_IMODE(out.stat().st_mode) == 0o640
    old = os.umask(0o027)
    try:
        write_output(tmp_path / "fresh.csv", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "fresh.csv").stat().st_mode) == 0o640


def test_a_symlinked_output_is_written_through(tmp_path: Path) -> None:
    real = tmp_path / "real.md"
    real.write_text("old")
    link = tmp_path / "latest.md"
    link.symlink_to(real)
    assert write_output(link, "new") == real
    assert link.is_symlink() and real.read_text() == "new"


def test_a_failure_leaves_the_old_file_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "t.json"
    out.write_text("old")

    def boom(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "replace", boom)
    with pytest.raises(OSError, match="No space"):
        write_output(out, "new")
    monkeypatch.undo()
    assert out.read_text() == "old" and _names(tmp_path) == ["t.json"]
    with pytest.raises(RuntimeError), open_output(out) as fh:
        fh.write(b"half")
        raise RuntimeError("the writer failed midway")
    assert out.read_text() == "old" and _names(tmp_path) == ["t.json"]


def test_a_non_utf8_output_name_is_written_and_named(tmp_path: Path, log: Path) -> None:
    out = tmp_path / os.fsdecode(b"bad\xff.md")
    write_output(out, "text")
    assert out.read_text() == "text"
    with pytest.raises(OutputRefused) as err:
        write_output(out, "text", inputs=[out])
    str(err.value).encode("utf-8")  # printable: no lone surrogate in the message
    assert "bad\\xff.md" in str(err.value)


def test_an_output_that_is_an_inputs_annotations_sidecar_is_refused(tmp_path) -> None:
    """``export --out LOG.annotations.json`` (or whatif's) would replace the log's notes, or
    become them: refused like the input itself, existing or not, named or linked."""
    from viewer.export.files import OutputRefused, resolve_output, write_output

    log = tmp_path / "run.log"
    log.write_text("TIMELINE,1,SYNTH_START,j,partition=0\n")
    sidecar = tmp_path / "run.log.annotations.json"
    with pytest.raises(OutputRefused, match="holds the annotations of the input"):
        resolve_output(sidecar, [log])
    sidecar.write_text('{"notes": []}')
    link = tmp_path / "elsewhere.json"
    link.symlink_to(sidecar)
    for target in (sidecar, link):
        with pytest.raises(OutputRefused, match="annotations"):
            write_output(target, "{}", [log])
    assert sidecar.read_text() == '{"notes": []}'
    # The notes themselves are written there by the sidecar module.
    write_output(sidecar, '{"notes": [1]}', [log], notes=True)
    assert sidecar.read_text() == '{"notes": [1]}'
    resolve_output(tmp_path / "run.trace.json", [log])  # any other name is fine


@pytest.mark.skipif(os.geteuid() != 0, reason="making a link owned by another user needs root")
def test_a_symlink_another_user_planted_in_a_sticky_folder_is_refused(tmp_path) -> None:  # noqa: ANN001
    """issue 27 item 2: --out wrote through a symlink another user planted in /tmp."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # sticky, like /tmp
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    link = shared / "report.md"
    link.symlink_to(victim)
    os.lchown(link, 65534, 65534)  # nobody's link
    with pytest.raises(OutputRefused, match="symlink owned by another user"):
        write_output(link, "x")
    assert victim.read_text() == "precious"
    # Our own link there, or another user's link in a folder that is not sticky, is written
    # through as before.
    os.lchown(link, os.geteuid(), os.getegid())
    write_output(link, "mine")
    assert victim.read_text() == "mine"
    shared.chmod(0o777)
    os.lchown(link, 65534, 65534)
    write_output(link, "open folder")
    assert victim.read_text() == "open folder"


@pytest.mark.parametrize("name", ["", "-"])
def test_an_empty_or_dash_output_is_refused_by_name(name) -> None:  # noqa: ANN001
    """issue 27 item 18: `--out -` wrote a file named '-', `--out ""` was ignored."""
    with pytest.raises(OutputRefused, match="give a file name"):
        write_output(name, "x")


def test_a_folder_that_cannot_be_written_is_named_not_a_temp_file(tmp_path) -> None:  # noqa: ANN001
    target = tmp_path / "missing" / "out.md"
    with pytest.raises(OSError) as err:
        write_output(target, "x")
    assert ".tmp" not in str(err.value) and "No such file or directory" in str(err.value)
