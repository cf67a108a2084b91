"""Where compiled kernels live: one file per key in the user's cache folder, written safely.

The folder is ``kernels`` in ``$SIMDPLAN_CACHE_DIR`` (simdplan's cache, shared with the spherized
URDFs) or in platformdirs' user cache folder for simdplan. A kernel is code that will run in the process, so nothing is loaded from a folder or
file that another user can write, or that belongs to someone else (UnsafeCacheError names it).
Files are written under a temporary name and renamed into place, so a reader sees a whole file or
none; two processes building the same key both rename a complete file, and the last one wins.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
import time
from pathlib import Path

SUFFIX = ".so"


class UnsafeCacheError(RuntimeError):
    """The kernel cache folder or file can be written by another user: it is not used."""


def cache_dir(create: bool = True) -> Path:
    """The kernel cache folder (created 0700 if missing); UnsafeCacheError if others can write it."""
    root = os.environ.get("SIMDPLAN_CACHE_DIR")
    if root:
        path = Path(root).expanduser() / "kernels"
    else:
        import platformdirs  # noqa: PLC0415 (only when a kernel is built or looked up)

        path = Path(platformdirs.user_cache_dir("simdplan")) / "kernels"
    if create:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.exists():
        require_private(path)
    return path


def require_private(path: Path) -> None:
    """UnsafeCacheError unless path is owned by this user and not writable by group or others."""
    st = path.lstat()
    if stat.S_ISLNK(st.st_mode):
        raise UnsafeCacheError(f"{path} is a symbolic link: simdplan's kernel cache must be a real folder and files")
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise UnsafeCacheError(f"{path} belongs to user id {st.st_uid}, not to this user ({os.getuid()}): "
                               "simdplan will not load kernels from it")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UnsafeCacheError(f"{path} can be written by other users (mode {stat.S_IMODE(st.st_mode):o}): simdplan "
                               "will not load kernels from it; chmod go-w it or set SIMDPLAN_CACHE_DIR")


def entry(key: str) -> Path:
    return cache_dir() / (key + SUFFIX)


def lookup(key: str) -> tuple[Path, str] | None:
    """The cached kernel of key and the SHA-256 recorded when it was stored, if there is one this user
    alone could have written. A kernel without a readable record is removed (rebuilt on next use)."""
    path = entry(key)
    if not path.exists():
        return None
    require_private(path)
    try:
        meta = json.loads((path.parent / (key + ".json")).read_text())
        digest = str(meta["sha256"])
    except (OSError, ValueError, KeyError, TypeError):
        remove(key)
        return None
    return path, digest


def sha256(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def store(key: str, built: Path, meta: dict) -> tuple[Path, str]:
    """Moves a built kernel into the cache under key (atomically) with its description beside it;
    returns its path and SHA-256, as lookup does."""
    folder = cache_dir()
    final = folder / (key + SUFFIX)
    os.chmod(built, 0o700)
    meta = dict(meta, sha256=sha256(built))
    os.replace(built, final)
    with tempfile.NamedTemporaryFile("w", dir=folder, prefix=".tmp-", suffix=".json", delete=False) as f:
        json.dump(dict(meta, key=key, created=time.time()), f, indent=1)
    os.replace(f.name, folder / (key + ".json"))
    return final, meta["sha256"]


def remove(key: str) -> None:
    """Drops one cached kernel (a file that failed to load: it is rebuilt on next use)."""
    for suffix in (SUFFIX, ".json"):
        try:
            (cache_dir() / (key + suffix)).unlink()
        except FileNotFoundError:
            pass


def entries() -> list[dict]:
    """Every cached kernel: key, file, size (bytes), and what was recorded when it was built."""
    folder = cache_dir(create=False)
    if not folder.exists():
        return []
    out = []
    for path in sorted(folder.glob("*" + SUFFIX)):
        key = path.name[: -len(SUFFIX)]
        meta = {}
        try:
            meta = json.loads((folder / (key + ".json")).read_text())
        except (OSError, ValueError):
            pass
        out.append(dict(meta, key=key, file=str(path), bytes=path.stat().st_size))
    return out


def clear() -> int:
    """Removes every cached kernel (and leftovers of interrupted builds); returns how many kernels."""
    folder = cache_dir(create=False)
    if not folder.exists():
        return 0
    n = 0
    for path in folder.iterdir():
        if path.name.endswith(SUFFIX) and not path.name.startswith(".tmp-"):
            n += 1
        if path.is_dir() and path.name.startswith(".tmp-"):
            for sub in path.iterdir():
                sub.unlink()
            path.rmdir()
        elif path.is_file():
            path.unlink()
    return n
