"""English and Simplified Chinese: the catalogue is complete and compiled, and a switch retranslates the open window."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication

from crewagent.core import texts
from crewagent.core.errors import ConversationNotFound
from crewagent.ui.i18n import LanguageManager
from crewagent.ui.mainwindow import MainWindow
from crewagent.worker import WorkerThread
from crewagent.worker.values import SettingsProblem
from tests.ui.conftest import ScriptedDialogs, open_project

ROOT = Path(__file__).resolve().parents[2]
TS = ROOT / "resources" / "translations" / "crewagent_zh_CN.ts"
QM = TS.with_suffix(".qm")
#: What `make translations` gives lupdate: every UI module, and the core's catalogue of texts.
SOURCES = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "desktop" / "crewagent" / "ui").rglob("*.py")) + [
    "desktop/crewagent/core/texts.py"
]
LUPDATE = "make translations"


def _tool(name: str) -> str | None:
    beside = Path(sys.executable).with_name(name)
    return str(beside) if beside.exists() else shutil.which(name)


def _lrelease() -> str | None:
    return _tool("pyside6-lrelease")


def _messages(ts: Path = TS) -> list[tuple[str, str, ET.Element]]:
    root = ET.parse(ts).getroot()
    return [
        (context.findtext("name") or "", message.findtext("source") or "", message.find("translation"))  # type: ignore[misc]
        for context in root.iter("context")
        for message in context.iter("message")
    ]


def _untranslated(ts: Path) -> list[str]:
    return [
        f"{context}: {source!r}"
        for context, source, translation in _messages(ts)
        if translation.get("type") in ("unfinished", "vanished", "obsolete") or not (translation.text or "").strip()
    ]


@pytest.mark.skipif(_lrelease() is None, reason="pyside6-lrelease is not installed")
def test_the_committed_qm_is_compiled_from_the_ts(tmp_path: Path) -> None:
    compiled = tmp_path / "check.qm"
    subprocess.run([_lrelease(), str(TS), "-qm", str(compiled)], check=True, capture_output=True)  # type: ignore[list-item]
    assert compiled.read_bytes() == QM.read_bytes(), (
        f"resources/translations/crewagent_zh_CN.qm is stale: run `{LUPDATE}`"
    )


def test_every_string_is_translated_and_keeps_its_placeholders() -> None:
    unfinished = _untranslated(TS)
    assert not unfinished, f"untranslated (after `{LUPDATE}`, translate them): {unfinished}"
    for context, source, translation in _messages():
        fields = set(re.findall(r"\{[^{}]*\}", source))
        assert fields == set(re.findall(r"\{[^{}]*\}", translation.text or "")), f"{context}: {source!r}"


@pytest.mark.skipif(_tool("pyside6-lupdate") is None, reason="pyside6-lupdate is not installed")
def test_every_user_visible_string_of_the_sources_has_a_translation(tmp_path: Path) -> None:
    """lupdate on today's sources (a string added without `make translations` shows up as unfinished)."""
    fresh = tmp_path / "fresh.ts"
    shutil.copyfile(TS, fresh)
    subprocess.run(
        [_tool("pyside6-lupdate"), *SOURCES, "-ts", str(fresh), "-no-obsolete", "-locations", "none", "-silent"],  # type: ignore[list-item]
        check=True, capture_output=True, cwd=ROOT,
    )
    sources = {(context, source) for context, source, _ in _messages(fresh)}
    assert ("core", "The app stopped while the answer was streaming.") in sources, "lupdate did not read core/texts.py"
    assert ("ProjectView", "Works") in sources, "lupdate did not read the UI modules"
    missing = _untranslated(fresh)
    assert not missing, f"{len(missing)} string(s) without a Chinese translation: run `{LUPDATE}`, translate them in {TS.name}, run it again:\n" + "\n".join(missing)
    stale = {(context, source) for context, source, _ in _messages()} - sources
    assert not stale, f"{TS.name} holds strings the sources no longer have: run `{LUPDATE}`: {sorted(stale)}"


def test_works_is_never_translated_as_artworks() -> None:
    assert not [source for _, source, translation in _messages() if "作品" in (translation.text or "")]


@pytest.fixture
def translated(qtbot: Any, qapp: QApplication, worker_thread: WorkerThread, dialogs: ScriptedDialogs) -> Iterator[MainWindow]:
    languages = LanguageManager(qapp)
    window = MainWindow(worker_thread.worker, dialogs=dialogs, languages=languages)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.settings is not None)
    yield window
    window.settings_opener.close()  # the dialog, if the test opened it
    window.close()
    languages.set_language("en")


def choose_language(qtbot: Any, window: MainWindow, code: str) -> None:
    dialog = window.settings_dialog
    window.show_settings()
    language = dialog.appearance_page.language
    language.setCurrentIndex(language.findData(code))
    dialog.apply_button.click()
    qtbot.waitUntil(lambda: window.settings is not None and window.settings.appearance.language == code)


def test_switching_to_chinese_retranslates_the_open_window_and_back(
    qtbot: Any, project: Any, translated: MainWindow, isolated_dirs: dict[str, Path]
) -> None:
    window = translated
    open_project(qtbot, window, project.root)
    assert window.project_view.settings_button.text() == "Settings"

    choose_language(qtbot, window, "zh_CN")
    qtbot.waitUntil(lambda: window.project_view.settings_button.text() == "设置")
    assert window.project_view.sidebar_switch.tabText(0) == "会话"
    assert window.file_menu.title() == "文件(&F)"
    assert window.start_page.new_button.text() == "新建项目…"
    assert window.start_page.provider_label.text() == "模型提供方：演示（离线脚本）"
    dialog = window.settings_dialog
    assert dialog.nav.item(0).text() == "模型" and dialog.windowTitle() == "设置"
    assert dialog.llm_page.test_button.text() == "测试连接" and dialog.close_button.text() == "关闭"
    dialog.show_problems([SettingsProblem("llm.baseUrl", texts.SETTINGS_URL_SCHEME)])
    assert dialog.llm_page.fields["llm.baseUrl"].error.text() == "基础 URL 必须以 http:// 或 https:// 开头。"
    assert "zh_CN" in (isolated_dirs["config"] / "settings.json").read_text(encoding="utf-8")
    works, header = window.project_view.works, window.project_view.conversation.header
    assert works.new_button.text() == "+ 新建" and works.search.placeholderText() == "搜索标题和消息"
    assert header.agent_label.text() == "智能体：" and header.chat_note.text() == "与模型直接聊天，可使用项目工具。"
    # A core error reaches the window in English and is shown in the UI language.
    window.message_bar.show_error(str(ConversationNotFound("c-1")))
    assert window.message_bar.text == "此项目中没有 ID 为 'c-1' 的会话。"

    choose_language(qtbot, window, "en")
    qtbot.waitUntil(lambda: window.project_view.settings_button.text() == "Settings")
    assert window.start_page.new_button.text() == "New Project…"
    assert window.start_page.provider_label.text() == "Model provider: Demo (offline script)"
