"""Extract an LMS zip safely: every entry is checked before any is written (no path outside the
folder, no link, no file twice, within the size and count limits), and the files land in
``scratch/extracted`` only when all were copied.
"""

from __future__ import annotations

import re
import shutil
import stat
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

__all__ = ["EXTRACTED", "ZipEntry", "extract_zip"]

EXTRACTED = "extracted"
_EXTRACTING = ".extracting"


@dataclass(frozen=True)
class ZipEntry:
    """A file extracted from the zip: its path there and the entry's time."""

    path: str
    date_time: tuple[int, int, int, int, int, int]


def extract_zip(archive: Path, scratch: Path, *, max_bytes: int, max_files: int) -> list[ZipEntry]:
    """Check every entry of ``archive``, then extract its files into ``scratch/extracted``."""
    staging, final = scratch / _EXTRACTING, scratch / EXTRACTED
    try:
        with zipfile.ZipFile(archive) as zipped:
            plan = _extraction_plan(archive, zipped.infolist(), max_bytes, max_files)
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir(parents=True)
            for path, info in plan.items():
                _extract_one(zipped, info, staging / path)
    except (zipfile.BadZipFile, zlib.error, EOFError, RuntimeError, NotImplementedError) as error:
        shutil.rmtree(staging, ignore_errors=True)
        raise ValueError(
            f"`{archive}` cannot be read as a zip ({error}): download it again from the LMS"
        ) from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    shutil.rmtree(final, ignore_errors=True)
    staging.rename(final)
    return [ZipEntry(path, info.date_time) for path, info in plan.items()]


def _extraction_plan(
    archive: Path, infos: list[zipfile.ZipInfo], max_bytes: int, max_files: int
) -> dict[str, zipfile.ZipInfo]:
    """The files to extract by normalised path, sorted; refuses the whole zip if one entry
    could land outside the extraction folder or the zip exceeds the limits."""
    refused = f"`{archive}` is refused:"
    if len(infos) > max_files:
        raise ValueError(f"{refused} it holds {len(infos)} entries, more than {max_files}")
    total = sum(info.file_size for info in infos)
    if total > max_bytes:
        raise ValueError(f"{refused} it unpacks to {total} bytes, more than {max_bytes}")
    plan: dict[str, zipfile.ZipInfo] = {}
    for info in infos:
        name = info.filename.replace("\\", "/")
        parts = [part for part in name.split("/") if part not in ("", ".")]
        if name.startswith("/") or re.match(r"[A-Za-z]:", name) or ".." in parts:
            raise ValueError(f"{refused} entry `{info.filename}` points outside the zip's folder")
        if stat.S_ISLNK(info.external_attr >> 16):
            raise ValueError(f"{refused} entry `{info.filename}` is a symbolic link")
        if info.is_dir() or not parts:
            continue
        path = "/".join(parts)
        if path in plan:
            raise ValueError(f"{refused} it holds `{path}` twice")
        plan[path] = info
    folders = {str(parent) for path in plan for parent in PurePosixPath(path).parents}
    clashes = sorted(folders & plan.keys())
    if clashes:
        raise ValueError(f"{refused} `{clashes[0]}` is both a file and a folder in it")
    return dict(sorted(plan.items()))


def _extract_one(zipped: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path) -> None:
    """Copy one entry. zipfile never returns more than the entry declares (the sizes are
    checked before), and an entry that lies about its size fails its CRC check."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipped.open(info) as source, target.open("xb") as sink:
        shutil.copyfileobj(source, sink)
