"""Texts the core writes in English are shown in Chinese when the UI is, and the log keeps them in English."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication

from crewagent.core import texts
from crewagent.core.errors import StoreWriteError
from crewagent.core.loop.interrupted import recovered_stream_message
from crewagent.core.packages import PackageError, PackageStore
from crewagent.core.tools.fs import WRITE_TOOL
from crewagent.core.tools.results import ErrorCode, error
from crewagent.ui.approval import ApprovalDialog
from crewagent.ui.core_texts import _match, translate_core
from crewagent.ui.i18n import LanguageManager
from crewagent.ui.settings.package_models import ProblemsModel
from crewagent.ui.timeline import TimelineModel, TimelineRole, TimelineView
from crewagent.ui.timeline.canvas import Fonts, Frame
from crewagent.ui.timeline.rows import error as error_row
from crewagent.ui.timeline.rows.tool import ToolFacts, ToolPainter
from crewagent.worker.turn_values import ApprovalPrompt, LoadedConversation, TimelineMessage, ToolCallRef

CORE = Path(texts.__file__).parent
FIELD = re.compile(r"\{(\w+)(![rsa])?(:[^{}]*)?\}")


@pytest.fixture
def chinese(qapp: QApplication) -> Iterator[None]:
    languages = LanguageManager(qapp)
    languages.set_language("zh_CN")
    yield
    languages.set_language("en")


def _filled(template: str) -> str:
    """``template`` with each field set to a value no template contains (``<path>``, ``'<name>'``, ``1.5``)."""
    return template.format(**{name: 1.5 if spec else f"<{name}>" for name, _conversion, spec in FIELD.findall(template)})


def test_every_catalogued_text_is_used_by_the_core() -> None:
    """A text no core (or worker) module uses is dead weight in the catalogue (and for the translators)."""
    code = "\n".join(path.read_text(encoding="utf-8") for folder in (CORE, CORE.parent / "worker") for path in folder.rglob("*.py") if path.name != "texts.py")
    assert len(texts.catalogue()) > 60
    assert not [name for name in texts.catalogue() if f"texts.{name}" not in code]


def test_every_catalogued_text_is_found_again_from_its_english() -> None:
    """No template hides another: each one, filled in, is matched back to itself with its fields."""
    for template in texts.catalogue().values():
        # Two fields side by side cannot be told apart again ("{where}{detail}" split anywhere).
        assert not re.search(r"\}\{", template), template
        text = _filled(template)
        matched = _match(text)
        assert matched is not None and matched[0] == template, (template, text, matched)


def test_texts_outside_the_catalogue_are_shown_as_they_are(chinese: None) -> None:
    for text in ("", "Hello", "The provider did not answer in time. And more.", "x" * 10_000, "Write"):
        assert translate_core(text) == text


def test_in_english_every_text_reads_as_the_core_wrote_it() -> None:
    for template in texts.catalogue().values():
        assert translate_core(_filled(template)) == _filled(template)


def test_a_catalogued_text_is_translated_with_its_fields_and_nested_reasons(chinese: None) -> None:
    exc = StoreWriteError.from_os_error(Path("/data/x.jsonl"), OSError(28, "No space left on device"))
    assert str(exc) == "Could not write /data/x.jsonl: the disk is full (or the file size limit was reached). Nothing already stored was lost."
    assert translate_core(str(exc)) == "无法写入 /data/x.jsonl：磁盘已满（或已达到文件大小上限）。已保存的内容没有丢失。"
    assert translate_core(texts.TOOL_UNKNOWN.format(name="fs.nope", available="fs.read")) == "没有名为 'fs.nope' 的可用工具。可用工具：fs.read。"
    assert translate_core(texts.TOOL_TIMED_OUT.format(name="fs.search", timeout=2.5)) == "fs.search 未在 2.5 秒内完成，已被停止。"
    network = "Network error talking to http://127.0.0.1:9/v1 (ConnectError: All connection attempts failed (refused))."
    assert translate_core(network) == "与 http://127.0.0.1:9/v1 通信时出现网络错误（ConnectError: All connection attempts failed (refused)）。"
    assert translate_core(texts.LLM_NETWORK.format(where=texts.LLM_THE_PROVIDER)) == "与模型提供方通信时出现网络错误。"


def _recording_sizer(seen: dict[str, str]) -> Any:
    def sizer(part: str, text: str, width: float, font: QFont, *, plain: bool = False, growing: bool = False) -> float:
        seen[part] = text
        return 20.0

    return sizer


def test_the_interruption_notice_of_a_recovered_answer_is_shown_in_chinese(chinese: None) -> None:
    message = recovered_stream_message({"content": "Half an answer", "messageId": "m-1"})
    assert message is not None and message.error is not None
    # The log keeps English: the persisted message is the same in every UI language.
    assert message.error["message"] == "The app stopped while the answer was streaming."
    assert "The app stopped while this answer was streaming" in (message.content or "")
    seen: dict[str, str] = {}
    geometry = error_row.measure(message.content or "", message.error, Frame.of(800), Fonts.of(QFont()), _recording_sizer(seen), 0)
    assert seen["error"] == "应用在回答生成过程中停止了。"
    assert seen["partial"] == "Half an answer"  # the model's words are data, never translated
    assert "模型调用失败" in geometry.title


def test_a_failed_tool_shows_its_error_in_chinese_above_the_result_kept_as_it_is(chinese: None) -> None:
    result = json.dumps(error(ErrorCode.ENOENT, texts.PATH_MISSING.format(path="@project/notes.md")), ensure_ascii=False)
    seen: dict[str, str] = {}
    facts = ToolFacts(name="fs.read", state="failed", expanded=True, arguments='{"path": "notes.md"}', result=result)
    geometry = ToolPainter().measure(facts, Frame.of(800), Fonts.of(QFont()), _recording_sizer(seen))
    assert seen["error"] == "@project/notes.md 不存在。"
    assert "@project/notes.md does not exist." in seen["result"]
    assert [label for label, _section in geometry.sections] == ["参数", "错误", "结果"]


def test_a_failed_tool_in_english_shows_no_extra_section(qapp: QApplication) -> None:
    result = json.dumps(error(ErrorCode.ENOENT, texts.PATH_MISSING.format(path="@project/notes.md")))
    facts = ToolFacts(name="fs.read", state="failed", expanded=True, arguments="{}", result=result)
    geometry = ToolPainter().measure(facts, Frame.of(800), Fonts.of(QFont()), _recording_sizer({}))
    assert [label for label, _section in geometry.sections] == ["Arguments", "Result"]


def test_the_approval_dialog_shows_the_core_summary_in_chinese(qtbot: Any, chinese: None) -> None:
    summary = WRITE_TOOL.summarize({"path": "@project/brief.md", "content": "你好"})  # type: ignore[misc]
    assert summary == "Write @project/brief.md (6 bytes)"
    dialog = ApprovalDialog(ApprovalPrompt("r-1", "c-1", "fs.write", summary, {"path": "@project/brief.md"}))
    qtbot.addWidget(dialog)
    assert dialog.summary.text() == "写入 @project/brief.md（6 字节）"
    assert dialog.deny_button.text() == "拒绝" and dialog.once_button.text() == "允许一次"


def test_package_problems_are_listed_in_chinese_and_copied_as_the_core_wrote_them(tmp_path: Path, chinese: None) -> None:
    folder = tmp_path / "classic"
    folder.mkdir()
    (folder / "workflow.yaml").write_text("name: old\n", encoding="utf-8")
    with pytest.raises(PackageError) as caught:
        PackageStore(tmp_path / "data").check(folder)
    model = ProblemsModel()
    model.set_problems(caught.value.problems)
    shown = model.index(0, ProblemsModel.MESSAGE).data()
    assert shown.startswith("不支持经典 BMAD 工作流包（workflow.yaml）")
    assert "a classic BMAD package (workflow.yaml) is not supported" in model.text()



def test_a_language_switch_lays_out_a_failed_tool_again_with_its_translated_error(qtbot: Any, qapp: QApplication) -> None:
    failed = error(ErrorCode.ENOENT, texts.PATH_MISSING.format(path="@project/notes.md"))
    loaded = LoadedConversation("proj", "conv", (
        TimelineMessage("a-1", "assistant", "2026-01-01T00:00:00.000Z", "Let me look.",
                        tool_calls=(ToolCallRef("c-1", "fs.read", '{"path": "notes.md"}'),)),
        TimelineMessage("t-1", "tool", "2026-01-01T00:00:00.000Z", json.dumps(failed), tool_call_id="c-1",
                        tool_name="fs.read", part_type="error"),
    ))
    model = TimelineModel()
    model.load(loaded)
    view = TimelineView()
    qtbot.addWidget(view)
    view.set_timeline(model)
    view.resize(640, 400)
    view.view_state.expanded_tools.add("tool:c-1")
    view.show()
    row = next(index for index in (model.index(r, 0, top) for top in model.iter_top() for r in range(model.rowCount(top)))
               if index.data(TimelineRole.KEY) == "tool:c-1")
    english = view.visualRect(row).height()
    assert english > 0
    languages = LanguageManager(qapp)
    try:
        languages.set_language("zh_CN")
        qtbot.waitUntil(lambda: view.visualRect(row).height() > english)
    finally:
        languages.set_language("en")
    qtbot.waitUntil(lambda: view.visualRect(row).height() == english)
