"""How Hive names a loaded file in its DML events and write notifications (ReplChangeManager): without a
change-management root, the path, `###` and the file's ACID sub-directory (if any); several files of one
write notification are joined by `]`. Pure: no I/O."""

from __future__ import annotations

# ReplChangeManager.TXN_WRITE_EVENT_FILE_SEPARATOR.
FILE_SEPARATOR = "]"


def encode_file_uri(path: str, sub_directory: str = "") -> str:
    """ReplChangeManager.encodeFileUri on a metastore without a change-management root: the checksum is
    left out (it is only written beside that root), so `path###sub_directory`."""
    return f"{path}###{sub_directory}"


def encoded_files(paths: tuple[str, ...] | list[str], sub_directories: tuple[str, ...] | list[str] = ()) -> list[str]:
    """Each file encoded with its sub-directory (one per file, or none at all)."""
    return [encode_file_uri(p, sub_directories[i] if sub_directories else "") for i, p in enumerate(paths)]
