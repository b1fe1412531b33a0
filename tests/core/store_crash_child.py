"""What the kill loops' children run (tests/core/test_store_crash.py): lean, so that a fork server
(tests/fakes/lean_fork.py) that preloads it stays small, and the messages each child appends."""

from __future__ import annotations

import os
import random
from pathlib import Path

from crewagent.core.messages import ConversationMessage
from crewagent.core.store import RuntimeStore

BIG_TOOL_BYTES = 50 * 1024


def message_for(tag: str) -> ConversationMessage:
    """The message with id ``tag``: the same in the child that appends it and the parent that checks it."""
    rng = random.Random(tag)
    kind = rng.random()
    if kind < 0.25:
        # Offloaded: a tool output over 50 KB that must come back in full.
        size = rng.randint(BIG_TOOL_BYTES + 1, 3 * BIG_TOOL_BYTES)
        chunk = f"{tag} ✓ output\n"
        content = (chunk * (size // len(chunk) + 1))[:size]
        return ConversationMessage(
            id=tag, role="tool", createdAt="2026-01-01T00:00:00.000Z", content=content,
            tool_call_id=f"call_{tag}", toolName="shell",
        )
    if kind < 0.35:
        # A long inline line (user text is never offloaded): many pages per write, so a kill can
        # land in the middle of writing it and leave a torn tail.
        size = rng.randint(256 * 1024, 1024 * 1024)
        return ConversationMessage(
            id=tag, role="user", createdAt="2026-01-01T00:00:00.000Z", content=(tag + " ") * (size // (len(tag) + 1)),
        )
    if kind < 0.55:
        return ConversationMessage(
            id=tag, role="assistant", createdAt="2026-01-01T00:00:00.000Z", content=None,
            tool_calls=[{"id": f"call_{tag}", "type": "function", "function": {"name": "ls", "arguments": '{"p": "."}'}}],
        )
    return ConversationMessage(
        id=tag, role="user", createdAt="2026-01-01T00:00:00.000Z", content=f"message {tag}: héllo 🙂 中文",
        extraField={"n": rng.randint(0, 10**6)},
    )


def append_messages(write_fd: int, data_dir: str, project_id: str, conversation_id: str, prefix: str,
                    count: int | None = None, go_fd: int | None = None, ready: bool = False) -> None:
    """Append ``message_for(f"{prefix}_{n}")`` for n = 0, 1, ... (``count`` of them, or until killed)
    and write each id to ``write_fd`` right after ``append_message`` returned (acknowledged).
    ``ready``: say READY first, once the store is open; ``go_fd``: wait for a byte on it first."""
    store = RuntimeStore(Path(data_dir))
    if ready:
        os.write(write_fd, b"READY\n")
    if go_fd is not None:
        os.read(go_fd, 1)
    number = 0
    while count is None or number < count:
        tag = f"{prefix}_{number}"
        store.append_message(project_id, conversation_id, message_for(tag))
        os.write(write_fd, f"{tag}\n".encode())  # acknowledged: append_message returned
        number += 1
