"""Image attachments in the core: stored by sha256 under @state, checked by magic bytes, resolved
only inside the attachments folder, sent as data URLs, counted as a flat token estimate."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crewagent.core.attachments import (
    IMAGE_TOKENS,
    MAX_IMAGE_BYTES,
    AttachmentError,
    decode_imported_images,
    export_data_urls,
    image_urls,
    inline_images,
    read_image_file,
    read_reference,
    resolve_reference,
    sniff,
    store_image,
    store_imported_images,
    user_content,
)
from crewagent.core.context.tokens import EstimateCounter, message_tokens
from crewagent.core.providers import accepts_images
from tests.fakes.images import GIF_BYTES, JPEG_HEADER, WEBP_HEADER, png_bytes

CID = "conv_0123"


def test_formats_are_told_by_their_magic_bytes_not_their_name(tmp_path: Path) -> None:
    assert [sniff(data) for data in (png_bytes(), JPEG_HEADER, WEBP_HEADER, GIF_BYTES)] == [
        "image/png",
        "image/jpeg",
        "image/webp",
        "image/gif",
    ]
    fake = tmp_path / "photo.png"
    fake.write_bytes(b"%PDF-1.7 not an image")
    with pytest.raises(AttachmentError) as caught:
        read_image_file(fake)
    assert str(caught.value) == "photo.png is not a PNG, JPEG, WebP or GIF image."


def test_an_image_is_stored_once_by_its_sha256_and_read_back(tmp_path: Path) -> None:
    state = tmp_path / "state"
    data = png_bytes()
    ref = store_image(state, CID, data)
    assert ref.startswith(f"@state/attachments/{CID}/") and ref.endswith(".png")
    assert store_image(state, CID, data) == ref  # the same image twice: one file
    assert len(list((state / "attachments" / CID).iterdir())) == 1
    assert read_reference(state, ref) == ("image/png", data)
    assert store_image(state, CID, GIF_BYTES).endswith(".gif")


def test_too_large_and_corrupt_files_are_refused_with_one_line(tmp_path: Path) -> None:
    big = tmp_path / "big.png"
    with big.open("wb") as handle:  # sparse: the size is checked before anything is read
        handle.write(png_bytes())
        handle.truncate(MAX_IMAGE_BYTES + 1)
    with pytest.raises(AttachmentError) as caught:
        read_image_file(big)
    assert str(caught.value) == "big.png is 20.0 MB; images up to 20.0 MB can be attached."
    with pytest.raises(AttachmentError, match="the pasted image is 20.0 MB"):
        store_image(tmp_path / "state", CID, png_bytes() + b"\0" * MAX_IMAGE_BYTES)
    with pytest.raises(AttachmentError) as caught:
        read_image_file(tmp_path / "gone.png")
    assert str(caught.value).startswith("gone.png cannot be read: ") and "\n" not in str(caught.value)
    assert not (tmp_path / "state").exists()  # nothing was stored


@pytest.mark.parametrize(
    "reference",
    [
        "@state/attachments/../logs/" + "a" * 64 + ".png",
        "@state/attachments/" + CID + "/../../secret.png",
        "@state/logs/tool-results/x.json",
        "@project/README.md",
        "/etc/passwd",
        "file:///etc/passwd",
        "@state/attachments/" + CID + "/notahash.png",
        "@state/attachments/" + CID + "/" + "a" * 64 + ".png\x00.txt",
    ],
)
def test_a_forged_reference_is_refused(tmp_path: Path, reference: str) -> None:
    with pytest.raises(AttachmentError, match="^Refused image reference .*: not a stored attachment.$"):
        resolve_reference(tmp_path / "state", reference)


def test_a_symlink_out_of_the_folder_or_a_changed_file_is_not_sent(tmp_path: Path) -> None:
    state = tmp_path / "state"
    secret = tmp_path / "secret.png"
    secret.write_bytes(png_bytes(rgb=(1, 2, 3)))
    folder = state / "attachments" / "evil"
    folder.mkdir(parents=True)
    digest = "b" * 64
    os.symlink(secret, folder / f"{digest}.png")
    with pytest.raises(AttachmentError, match="not a stored attachment"):
        read_reference(state, f"@state/attachments/evil/{digest}.png")

    ref = store_image(state, CID, png_bytes())
    (state / ref.removeprefix("@state/")).write_bytes(png_bytes(rgb=(9, 9, 9)))  # e.g. a tool overwrote it
    with pytest.raises(AttachmentError, match="was changed after it was attached"):
        read_reference(state, ref)


def test_the_request_carries_data_urls_and_a_note_for_what_cannot_be_sent(tmp_path: Path) -> None:
    state = tmp_path / "state"
    data = png_bytes()
    ref = store_image(state, CID, data)
    forged = "@state/attachments/../../../etc/passwd"
    messages = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": user_content("what is this?", [ref, forged, "https://example.com/cat.png"])},
    ]
    inlined = inline_images(messages, state)
    parts = inlined.messages[1]["content"]
    assert parts[0] == {"type": "text", "text": "what is this?"}
    assert parts[1] == {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(data).decode()}}
    assert parts[2]["type"] == "text" and "not a stored attachment" in parts[2]["text"]
    assert parts[3]["image_url"]["url"] == "https://example.com/cat.png"
    assert len(inlined.notes) == 1 and messages[1]["content"][1]["image_url"]["url"] == ref  # the input is not changed

    blind = inline_images(messages, state, vision=False).messages[1]["content"]
    assert [part["type"] for part in blind] == ["text", "text", "text", "text"]
    assert "does not accept images" in blind[1]["text"]


def test_an_image_counts_as_the_flat_estimate() -> None:
    counter = EstimateCounter()
    plain = message_tokens({"role": "user", "content": "look"}, counter)
    with_two = message_tokens({"role": "user", "content": user_content("look", ["@state/attachments/c/x.png"] * 2)}, counter)
    assert with_two - plain == 2 * IMAGE_TOKENS == 2 * 765


def test_vision_comes_from_the_setting_else_the_model_table_else_yes() -> None:
    assert accepts_images("openai", "gpt-4o") is True
    assert accepts_images("openai", "o3-mini") is False
    assert accepts_images("deepseek", "deepseek-chat") is False
    assert accepts_images("openai-compatible", "llava:13b") is True  # unknown: assumed
    assert accepts_images("openai", "o3-mini", True) is True
    assert accepts_images("openai", "gpt-4o", False) is False


_images = st.sampled_from([png_bytes(), png_bytes(2, 2, (0, 0, 255)), GIF_BYTES, JPEG_HEADER, WEBP_HEADER])
_part = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.text(max_size=20)),
    st.builds(lambda d: ("image", d), _images),
)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(_part, max_size=6))
def test_any_content_round_trips_its_images_through_export_and_import(tmp_path_factory: pytest.TempPathFactory, parts: list) -> None:  # type: ignore[type-arg]
    """Stored (log: references) -> exported (data URLs) -> imported elsewhere (references again):
    the same images in the same places, the text parts untouched."""
    source, target = tmp_path_factory.mktemp("a"), tmp_path_factory.mktemp("b")
    logged = [store_image(source, CID, p[1]) if isinstance(p, tuple) else p for p in parts]
    content = [{"type": "image_url", "image_url": {"url": p}} if isinstance(p, str) else p for p in logged]
    exported, warnings = export_data_urls([{"role": "user", "content": content}], source)
    assert not warnings
    assert not any(url.startswith("@") for url in image_urls(exported[0]["content"]))
    decoded = decode_imported_images(exported[0]["content"], "messages[0]")
    assert decoded == [p[1] for p in parts if isinstance(p, tuple)]
    imported = store_imported_images(exported[0]["content"], target, "conv_new")
    assert [read_reference(target, url)[1] for url in image_urls(imported)] == decoded
    assert [p for p in imported if p["type"] == "text"] == [p for p in content if p["type"] == "text"]


def test_a_damaged_data_url_is_refused_on_import() -> None:
    content = [{"type": "image_url", "image_url": {"url": "data:image/png;base64,@@@not-base64"}}]
    with pytest.raises(AttachmentError, match=r"^messages\[3\]: an image data URL is not valid base64"):
        decode_imported_images(content, "messages[3]")
    not_png = [{"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(b"hello").decode()}}]
    with pytest.raises(AttachmentError, match=r"^messages\[0\]: messages\[0\] image 1 is not a PNG"):
        decode_imported_images(not_png, "messages[0]")


def test_edit_and_regenerate_keep_the_images_and_an_images_only_message_counts() -> None:
    from crewagent.core.message_actions import edit_turn, regenerate_turn
    from crewagent.core.messages import ConversationMessage

    ref = "@state/attachments/c/" + "a" * 64 + ".png"
    asked = ConversationMessage.new("user", user_content("what is it?", [ref]))
    answer = ConversationMessage.new("assistant", "A cat.")
    assert regenerate_turn([asked, answer]).text == asked.content
    assert edit_turn([asked, answer], asked.id, "and now?").text == user_content("and now?", [ref])
    only_image = ConversationMessage.new("user", user_content("", [ref]))
    assert regenerate_turn([only_image]).replaces == only_image.id


def test_the_text_of_a_message_with_images_is_searchable() -> None:
    from crewagent.core.search.text import readable_text

    content = user_content("the red button", ["@state/attachments/c/" + "a" * 64 + ".png"])
    assert readable_text({"role": "user", "content": content}) == "the red button"


_reference_like = st.one_of(
    st.text(max_size=120),
    st.builds(
        lambda folder, name: f"@state/attachments/{folder}/{name}",
        st.sampled_from(["..", ".", "", CID, "a/..", "../state", "%2e%2e", "x\x00"]) | st.text(max_size=12),
        st.text(alphabet="0123456789abcdef./", max_size=70).map(lambda n: n + ".png"),
    ),
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(reference=_reference_like)
def test_any_reference_resolves_inside_the_attachments_folder_or_is_refused(tmp_path: Path, reference: str) -> None:
    root = (tmp_path / "state" / "attachments").resolve()
    try:
        target = resolve_reference(tmp_path / "state", reference)
    except AttachmentError as exc:
        assert "\n" not in str(exc)
        return
    assert target.is_relative_to(root) and target.parent.parent == root


def test_the_calls_of_one_turn_read_each_image_once(tmp_path: Path) -> None:
    state = tmp_path / "state"
    ref = store_image(state, CID, png_bytes())
    messages = [{"role": "user", "content": user_content("look", [ref])}]
    read: dict[str, str] = {}
    first = inline_images(messages, state, read=read).messages
    (state / ref.removeprefix("@state/")).unlink()  # gone after the first call: the turn still has it
    assert inline_images(messages, state, read=read).messages == first
    assert "is missing" in inline_images(messages, state).messages[0]["content"][1]["text"]  # a new turn reads again
