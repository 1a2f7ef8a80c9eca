"""A problem folder packed the way an author would upload it: ``tar czf`` of the folder (one
top-level folder) or a zip of its contents (no top-level folder)."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path


def tar_gz_of(folder: Path) -> bytes:
    """``tar czf - -C PARENT NAME``: the folder itself at the archive's top."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.add(folder, arcname=folder.name)
    return buffer.getvalue()


def zip_of_contents(folder: Path) -> bytes:
    """``cd FOLDER && zip -r - .``: the folder's contents at the archive's top."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            archive.write(path, path.relative_to(folder).as_posix())
    return buffer.getvalue()
