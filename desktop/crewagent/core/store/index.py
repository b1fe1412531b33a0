"""A project's conversation index (index.json) and its recovery from the conversation folders."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import ValidationError

from crewagent.core.messages import ConversationMeta, utc_now_iso
from crewagent.core.store._fsutil import atomic_write_json, read_json
from crewagent.core.store.log import LOG_NAME, load_log

INDEX_NAME = "index.json"
META_NAME = "meta.json"
#: Marks a conversation folder whose deletion has begun; such a folder is never indexed again.
DELETED_MARKER = ".deleted"
RECOVERED_TITLE = "Recovered conversation"


class ConversationIndex:
    """index.json of one project, cached while the file is unchanged on disk.

    The caller holds the project lock for every write. The per-conversation ``meta.json`` copy
    (written on create and on every metadata change, not on appends) lets a damaged index be
    rebuilt with titles and modes intact.
    """

    def __init__(self, conversations_dir: Path):
        self.dir = conversations_dir
        self.path = conversations_dir / INDEX_NAME
        self._cache_key: tuple[int, int, int] | None = None
        self._cache: list[ConversationMeta] = []
        self.recovered_from: Path | None = None

    def load(self) -> list[ConversationMeta]:
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            if self.dir.is_dir() and any(self._conversation_dirs()):
                return self._rebuild(keep_aside=False)
            return []
        key = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        if key == self._cache_key:
            return [meta.model_copy() for meta in self._cache]
        try:
            data = read_json(self.path)
            if not isinstance(data, list):
                raise ValueError("index.json is not a list")
            metas = [ConversationMeta.model_validate(item) for item in data]
        except (OSError, UnicodeDecodeError, ValueError, ValidationError):
            return self._rebuild(keep_aside=True)
        self._cache_key, self._cache = key, metas
        return [meta.model_copy() for meta in metas]

    def count_below(self, conversation_id: str, count: int) -> bool:
        """Whether the cached index records fewer than ``count`` messages for a conversation."""
        return any(meta.id == conversation_id and meta.messageCount < count for meta in self._cache)

    def save(self, metas: list[ConversationMeta]) -> None:
        atomic_write_json(self.path, [meta.model_dump(mode="json", exclude_none=True) for meta in metas])
        stat = self.path.stat()
        self._cache_key = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        self._cache = [meta.model_copy() for meta in metas]

    def write_meta(self, meta: ConversationMeta) -> None:
        atomic_write_json(self.dir / meta.id / META_NAME, meta.model_dump(mode="json", exclude_none=True))

    def _conversation_dirs(self) -> list[Path]:
        return [
            entry
            for entry in sorted(self.dir.iterdir())
            if entry.is_dir() and not entry.name.startswith(".") and not (entry / DELETED_MARKER).exists()
        ]

    def _rebuild(self, *, keep_aside: bool) -> list[ConversationMeta]:
        """Recreate index.json from the conversation folders; the damaged original is kept."""
        if keep_aside and self.path.exists():
            stamp = utc_now_iso().replace(":", "").replace(".", "")
            aside = self.path.with_name(f"{INDEX_NAME}.corrupt-{stamp}")
            os.replace(self.path, aside)
            self.recovered_from = aside
        metas = [self._recover_meta(folder) for folder in self._conversation_dirs()]
        metas = [meta for meta in metas if meta is not None]
        metas.sort(key=lambda meta: meta.lastActiveAt, reverse=True)
        self.save(metas)
        return [meta.model_copy() for meta in metas]

    def _recover_meta(self, folder: Path) -> ConversationMeta | None:
        log_path = folder / LOG_NAME
        has_log = log_path.exists() or (folder / "messages.json").exists()
        meta: ConversationMeta | None = None
        try:
            meta = ConversationMeta.model_validate(read_json(folder / META_NAME))
        except (OSError, UnicodeDecodeError, ValueError, ValidationError):
            if not has_log:
                return None
        loaded = load_log(log_path)
        first_time = loaded.messages[0].createdAt if loaded.messages else utc_now_iso()
        last_time = loaded.messages[-1].createdAt if loaded.messages else first_time
        if meta is None:
            first_user = next((m.text for m in loaded.messages if m.role == "user" and m.text.strip()), "")
            meta = ConversationMeta(
                id=folder.name,
                title=title_from_text(first_user) or RECOVERED_TITLE,
                createdAt=first_time,
                lastActiveAt=last_time,
            )
        meta.id = folder.name
        meta.messageCount = len(loaded.messages)
        if loaded.messages:
            meta.lastActiveAt = max(meta.lastActiveAt, last_time)
        return meta


def title_from_text(text: str, limit: int = 60) -> str:
    """A conversation title from the first words of a message."""
    single = " ".join(text.split())
    return single if len(single) <= limit else single[: limit - 1].rstrip() + "…"
