"""Hostile packages are refused before anything is written under the data folder."""

from __future__ import annotations

import os
import stat
import struct
import warnings
import zipfile
import zlib
from pathlib import Path
from typing import Any

import pytest

from crewagent.core.packages import MAX_ENTRIES, PackageError, PackageStore, archive
from crewagent.core.packages.archive import ZipSource, entry_name_problem
from tests.core.package_helpers import flat_package, render, write_folder, write_zip


def _zip_with(tmp_path: Path, extra: dict[str, bytes], *, base: bool = True) -> Path:
    path = tmp_path / "hostile.bmad"
    # The fastest deflate: the bomb below (50 MB of zeros) takes 0.1 CPU-s instead of 0.3 at the
    # default level 6, and is still a deflated entry that inflates to 50 MB.
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        if base:
            for name, content in flat_package().items():
                zf.writestr(name, render(content))
        for name, content in extra.items():
            zf.writestr(name, content)
    return path


def _refused(tmp_path: Path, source: Path) -> PackageError:
    data = tmp_path / "data"
    with pytest.raises(PackageError) as caught:
        PackageStore(data).import_package(source)
    assert not data.exists(), f"written under <data>: {sorted(p.name for p in data.rglob('*'))}"
    return caught.value


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("../evil.md", "path traversal"),
        ("steps/../../evil.md", "path traversal"),
        ("/etc/evil.md", "absolute"),
        ("C:/evil.md", "absolute"),
        ("steps//evil.md", "empty path segment"),
        ("./steps/evil.md", "'.' segment"),
        ("steps\\..\\evil.md", "backslash"),
    ],
)
def test_a_hostile_entry_name_is_refused_with_nothing_written(tmp_path: Path, name: str, reason: str) -> None:
    error = _refused(tmp_path, _zip_with(tmp_path, {name: b"x"}))
    assert [(p.file, p.pointer) for p in error.problems] == [(name, "")]
    assert reason in error.problems[0].message


def test_a_nul_in_an_entry_name_is_refused_though_zipfile_would_cut_it(tmp_path: Path) -> None:
    path = _zip_with(tmp_path, {"steps/evil.md#../../x": b"x"})
    raw = path.read_bytes()
    assert raw.count(b"steps/evil.md#") == 2  # the local header and the central directory
    path.write_bytes(raw.replace(b"steps/evil.md#", b"steps/evil.md\0"))
    assert "steps/evil.md" in zipfile.ZipFile(path).namelist()  # what a naive reader would extract
    error = _refused(tmp_path, path)
    assert "NUL" in error.problems[0].message


def test_a_symlink_entry_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "link.bmad"
    with zipfile.ZipFile(path, "w") as zf:
        for name, content in flat_package().items():
            zf.writestr(name, render(content))
        link = zipfile.ZipInfo("steps/secrets.md")
        link.create_system = 3
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(link, "/etc/passwd")
    error = _refused(tmp_path, path)
    assert [(p.file, p.message) for p in error.problems] == [("steps/secrets.md", "refused: a symbolic link")]


def _stored_zip(entries: dict[str, bytes]) -> bytes:
    """A zip of ``entries``, stored (not deflated), its headers packed directly: zipfile's
    writestr spends ~25 µs of Python per entry, 0.25 CPU-s for 10,000."""
    local, central = bytearray(), bytearray()
    for name, content in entries.items():
        raw, crc = name.encode(), zlib.crc32(content)
        # dos time 0, date 1980-01-01 (33); version 2.0; no flags, no extra field, no attributes
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 0, 0, 33, crc, len(content), len(content), len(raw), 0, 0, 0, 0, 0, len(local)) + raw
        local += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 33, crc, len(content), len(content), len(raw), 0) + raw + content
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(central), len(local), 0)
    return bytes(local + central + end)


@pytest.fixture(scope="module")
def at_the_limit() -> bytes:
    """A valid package of exactly MAX_ENTRIES entries (its files, then empty assets), built once."""
    files = {name: render(content) for name, content in flat_package().items()}
    entries = {**files, **{f"assets/{i}.txt": b"" for i in range(MAX_ENTRIES - len(files))}}
    assert len(entries) == MAX_ENTRIES  # the import reads each back and checks its CRC
    return _stored_zip(entries)


def test_more_than_10000_entries_are_refused(tmp_path: Path, at_the_limit: bytes) -> None:
    path = tmp_path / "many.bmad"
    path.write_bytes(at_the_limit)
    with zipfile.ZipFile(path, "a", zipfile.ZIP_STORED) as zf:
        zf.writestr("assets/one-more.txt", b"")
        assert len(zf.infolist()) == MAX_ENTRIES + 1
    error = _refused(tmp_path, path)
    assert "10001 entries" in str(error)


def test_exactly_10000_entries_pass_the_count(tmp_path: Path, at_the_limit: bytes) -> None:
    path = tmp_path / "many.bmad"
    path.write_bytes(at_the_limit)
    package = PackageStore(tmp_path / "data").import_package(path)
    assert (package.root / "assets" / "0.txt").is_file()


def _patch_central_sizes(path: Path, name: bytes, size: int) -> None:
    """Rewrite the uncompressed size of ``name`` in the central directory (what ZipFile trusts)."""
    raw = bytearray(path.read_bytes())
    at = raw.find(b"PK\x01\x02")
    while at >= 0:
        name_len = struct.unpack_from("<H", raw, at + 28)[0]
        if raw[at + 46 : at + 46 + name_len] == name:
            struct.pack_into("<I", raw, at + 24, size)
        at = raw.find(b"PK\x01\x02", at + 4)
    path.write_bytes(bytes(raw))


def test_more_than_200_mb_declared_is_refused(tmp_path: Path) -> None:
    path = _zip_with(tmp_path, {"assets/big.bin": b"\0" * 1000})
    _patch_central_sizes(path, b"assets/big.bin", 201 * 1024 * 1024)
    error = _refused(tmp_path, path)
    assert "at most 209715200" in str(error)


def test_a_zip_bomb_that_lies_about_its_size_is_refused_before_a_byte_is_written(tmp_path: Path) -> None:
    # 50 MB of zeros that declares 10 bytes: the real content is found when the bytes are counted.
    path = _zip_with(tmp_path, {"assets/bomb.bin": b"\0" * (50 * 1024 * 1024)})
    _patch_central_sizes(path, b"assets/bomb.bin", 10)
    error = _refused(tmp_path, path)
    assert [p.file for p in error.problems] == ["assets/bomb.bin"]


def test_bytes_are_counted_while_reading_whatever_was_declared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_zip(flat_package(), tmp_path / "ok.bmad")
    with ZipSource(path) as source:  # the declared total passed the check
        monkeypatch.setattr(archive, "MAX_UNPACKED_BYTES", 100)
        with pytest.raises(PackageError, match="more than"):
            source.verify()


def test_duplicate_and_case_colliding_entries_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "dup.bmad"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate name it is asked to write
        with zipfile.ZipFile(path, "w") as zf:
            for name, content in flat_package().items():
                zf.writestr(name, render(content))
            zf.writestr("steps/end.md", b"---\nnodeId: evil\n---\n")
            zf.writestr("Steps/decide.md", b"x")
    error = _refused(tmp_path, path)
    assert sorted(p.file for p in error.problems) == ["Steps/decide.md", "steps/end.md"]


def test_not_a_zip_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "nope.bmad"
    path.write_bytes(b"not a zip at all")
    error = _refused(tmp_path, path)
    assert "zip" in str(error)


def test_a_symlink_in_a_package_folder_is_refused(tmp_path: Path) -> None:
    folder = write_folder(flat_package(), tmp_path / "pkg")
    (tmp_path / "secret.md").write_text("secret")
    os.symlink(tmp_path / "secret.md", folder / "steps" / "secret.md")
    error = _refused(tmp_path, folder)
    assert [(p.file, p.message) for p in error.problems] == [("steps/secret.md", "refused: a symbolic link")]


def test_a_package_zipped_with_its_folder_is_unwrapped(tmp_path: Path) -> None:
    path = write_zip({f"my-package/{name}": content for name, content in flat_package().items()}, tmp_path / "w.bmad")
    package = PackageStore(tmp_path / "data").import_package(path)
    assert (package.root / "bmad.json").is_file() and not (package.root / "my-package").exists()


@pytest.mark.parametrize(
    ("name", "ok"),
    [("steps/a.md", True), ("steps/", True), ("a\0b", False), ("", False), ("a/./b", False), ("a/", True), ("a//", False)],
)
def test_entry_name_rules(name: str, ok: bool) -> None:
    assert (entry_name_problem(name) is None) is ok



@pytest.mark.parametrize(("keep_bytes", "reads"), [(archive._KEEP_BYTES, 1), (3000, 2)], ids=["kept", "too-big-to-keep"])
def test_an_install_writes_the_bytes_its_check_read_without_reading_them_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keep_bytes: int, reads: int
) -> None:
    """verify() keeps what it read (up to _KEEP_BYTES in all) and extract_to writes that without
    opening the entry again; an entry that did not fit is read again. Either way the installed
    files are the zip's, byte for byte."""
    monkeypatch.setattr(archive, "_KEEP_BYTES", keep_bytes)
    files = {**{name: render(content) for name, content in flat_package().items()}, "assets/big.bin": os.urandom(4000)}
    path = tmp_path / "p.bmad"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, content in files.items():
            zf.writestr(name, content)
    opened: list[str] = []
    real_open = zipfile.ZipFile.open

    def counting(self: zipfile.ZipFile, name: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(name)
        return real_open(self, name, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "open", counting)
    package = PackageStore(tmp_path / "data").import_package(path)
    assert {p.relative_to(package.root).as_posix(): p.read_bytes() for p in package.root.rglob("*") if p.is_file()} == files
    assert opened.count("assets/big.bin") == reads  # verify's read, and extract_to's when it was not kept
