"""Image attachments end to end (issue 17 item 4): ``crewagent chat --image`` -> a stored file and a
reference in the log -> a request with an ``image_url`` data URL (recorded by the scripted server)
-> export (openai: data URL; markdown: a link to the file; jsonl: the reference) -> import -> the
same images; and a model without vision refused before anything is sent or created."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from crewagent.cli import main
from crewagent.core.attachments import image_urls, read_reference
from crewagent.core.settings import SettingsStore
from crewagent.core.store import RuntimeStore
from tests.fakes.images import GIF_BYTES, png_bytes
from tests.cli.test_chat_agent import provider  # noqa: F401  (the scripted provider fixture)
from tests.fakes.scripted_server import ScriptedServer, text


def _data_url(mime: str, data: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


def test_image_round_trip_through_request_export_and_import(
    provider: ScriptedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shot, gif = tmp_path / "screenshot.png", tmp_path / "anim.gif"
    shot.write_bytes(png_bytes(8, 5))
    gif.write_bytes(GIF_BYTES)
    provider.script(text("A red rectangle and a white dot."), text("Still red."))
    common = ["--data-dir", str(tmp_path / "d"), "--project", str(tmp_path / "p")]
    argv = ["chat", *common, "--provider", "openai-compatible", "--new", "--image", str(shot), "--image", str(gif)]

    assert main([*argv, "What is in these pictures?"]) == 0
    cid = capsys.readouterr().err.splitlines()[0]
    assert main(["chat", *common, "--provider", "openai-compatible", "--conversation", cid, "and now?"]) == 0
    capsys.readouterr()

    # The request: a text part and one image_url part per image, as data URLs.
    first = provider.requests[0].body["messages"][-1]
    assert first["role"] == "user"
    assert first["content"] == [
        {"type": "text", "text": "What is in these pictures?"},
        {"type": "image_url", "image_url": {"url": _data_url("image/png", shot.read_bytes())}},
        {"type": "image_url", "image_url": {"url": _data_url("image/gif", GIF_BYTES)}},
    ]
    # An earlier turn's images are sent again (the model keeps nothing between calls).
    second = provider.requests[1].body["messages"]
    assert [len(image_urls(m.get("content"))) for m in second if m["role"] == "user"] == [2, 0]

    # The log: references, never base64; the files are under @state/attachments/<conversation>/.
    store = RuntimeStore(tmp_path / "d")
    pid = store.open_project(tmp_path / "p").id
    log_text = (tmp_path / "d" / "projects" / pid / "conversations" / cid / "messages.jsonl").read_text(encoding="utf-8")
    user = store.load_messages(pid, cid).messages[0]
    refs = image_urls(user.content)
    assert [ref.split("/")[:3] for ref in refs] == [["@state", "attachments", cid]] * 2
    assert refs[0] in log_text and "base64" not in log_text
    state = store.state_dir(pid)
    assert [read_reference(state, ref)[1] for ref in refs] == [shot.read_bytes(), GIF_BYTES]

    # Export: openai puts the data URLs back; markdown links the files; jsonl keeps the references.
    out = tmp_path / "out.json"
    assert main(["export", *common, "--conversation", cid, "--format", "openai", "-o", str(out)]) == 0
    exported = json.loads(out.read_text(encoding="utf-8"))
    assert exported[0]["content"] == first["content"]
    assert main(["export", *common, "--conversation", cid, "--format", "markdown"]) == 0
    markdown = capsys.readouterr().out
    assert f"![image 1](<{(state / refs[0].removeprefix('@state/')).resolve().as_uri()}>)" in markdown
    assert "base64" not in markdown
    assert main(["export", *common, "--conversation", cid, "--format", "jsonl"]) == 0
    assert refs[0] in capsys.readouterr().out

    # Import the openai export elsewhere: the images become files again, named by reference.
    other = ["--data-dir", str(tmp_path / "d2"), "--project", str(tmp_path / "p2")]
    assert main(["import", *other, str(out)]) == 0
    new_cid = capsys.readouterr().out.strip()
    store2 = RuntimeStore(tmp_path / "d2")
    pid2 = store2.open_project(tmp_path / "p2").id
    imported = store2.load_messages(pid2, new_cid).messages[0]
    assert "base64" not in imported.to_log_line()
    new_refs = image_urls(imported.content)
    assert all(ref.startswith(f"@state/attachments/{new_cid}/") for ref in new_refs)
    assert [read_reference(store2.state_dir(pid2), ref)[1] for ref in new_refs] == [shot.read_bytes(), GIF_BYTES]
    assert imported.text == "What is in these pictures?"


def test_a_model_without_vision_is_refused_before_anything_is_sent(
    provider: ScriptedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shot = tmp_path / "s.png"
    shot.write_bytes(png_bytes())
    SettingsStore().update(llm={"vision": False})
    common = ["--data-dir", str(tmp_path / "d"), "--project", str(tmp_path / "p")]

    code = main(["chat", *common, "--provider", "openai-compatible", "--new", "--image", str(shot), "describe it"])

    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().splitlines() == [
        "crewagent: The model scripted-model does not accept images: choose a model with vision, or remove the images "
        "(a model the app does not know is assumed to accept them; Settings > Context > Images can say otherwise)."
    ]
    assert provider.requests == []  # nothing was sent
    store = RuntimeStore(tmp_path / "d")
    assert store.list_conversations(store.open_project(tmp_path / "p").id) == []  # nothing was created


def test_a_corrupt_image_is_refused_with_one_line(provider: ScriptedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "broken.png"
    bad.write_bytes(b"\x89PNX not really")
    code = main(["chat", "--data-dir", str(tmp_path / "d"), "--project", str(tmp_path / "p"), "--provider", "openai-compatible", "--image", str(bad), "hi"])
    assert code == 2
    assert capsys.readouterr().err.strip() == "crewagent: broken.png is not a PNG, JPEG, WebP or GIF image."
    assert provider.requests == []


def test_import_refuses_a_damaged_data_url_and_creates_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "in.json"
    source.write_text(
        json.dumps([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,!!"}}]}]),
        encoding="utf-8",
    )
    common = ["--data-dir", str(tmp_path / "d"), "--project", str(tmp_path / "p")]
    assert main(["import", *common, str(source)]) == 2
    assert capsys.readouterr().err.startswith("crewagent: messages[0]: an image data URL is not valid base64")
    assert not (tmp_path / "p").exists() and not (tmp_path / "d").exists()  # refused before anything was created
