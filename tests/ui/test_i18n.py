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

from crewagent.ui.i18n import LanguageManager
from crewagent.ui.mainwindow import MainWindow
from crewagent.worker import WorkerThread
from tests.ui.conftest import ScriptedDialogs, open_project

TRANSLATIONS = Path(__file__).resolve().parents[2] / "resources" / "translations"
TS = TRANSLATIONS / "crewagent_zh_CN.ts"
QM = TRANSLATIONS / "crewagent_zh_CN.qm"
LUPDATE = "pyside6-lupdate $(find desktop/crewagent/ui -name '*.py' | sort) -ts resources/translations/crewagent_zh_CN.ts -no-obsolete -locations none"


def _lrelease() -> str | None:
    beside = Path(sys.executable).with_name("pyside6-lrelease")
    return str(beside) if beside.exists() else shutil.which("pyside6-lrelease")


def _messages() -> list[tuple[str, str, ET.Element]]:
    root = ET.parse(TS).getroot()
    return [
        (context.findtext("name") or "", message.findtext("source") or "", message.find("translation"))  # type: ignore[misc]
        for context in root.iter("context")
        for message in context.iter("message")
    ]


@pytest.mark.skipif(_lrelease() is None, reason="pyside6-lrelease is not installed")
def test_the_committed_qm_is_compiled_from_the_ts(tmp_path: Path) -> None:
    compiled = tmp_path / "check.qm"
    subprocess.run([_lrelease(), str(TS), "-qm", str(compiled)], check=True, capture_output=True)  # type: ignore[list-item]
    assert compiled.read_bytes() == QM.read_bytes(), (
        "resources/translations/crewagent_zh_CN.qm is stale: run .venv/bin/pyside6-lrelease "
        "resources/translations/crewagent_zh_CN.ts"
    )


def test_every_string_is_translated_and_keeps_its_placeholders() -> None:
    unfinished = [f"{context}: {source!r}" for context, source, translation in _messages() if translation.get("type") == "unfinished" or not (translation.text or "").strip()]
    assert not unfinished, f"untranslated (after `{LUPDATE}`, translate them): {unfinished}"
    for context, source, translation in _messages():
        fields = set(re.findall(r"\{[^{}]*\}", source))
        assert fields == set(re.findall(r"\{[^{}]*\}", translation.text or "")), f"{context}: {source!r}"


@pytest.fixture
def translated(qtbot: Any, qapp: QApplication, worker_thread: WorkerThread, dialogs: ScriptedDialogs) -> Iterator[MainWindow]:
    languages = LanguageManager(qapp)
    window = MainWindow(worker_thread.worker, dialogs=dialogs, languages=languages)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.settings is not None)
    yield window
    window.settings_dialog.close()
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
    assert window.project_view.sidebar_switch.tabText(0) == "作品"
    assert window.file_menu.title() == "文件(&F)"
    assert window.start_page.new_button.text() == "新建项目…"
    assert window.start_page.provider_label.text() == "模型提供方：演示（离线脚本）"
    dialog = window.settings_dialog
    assert dialog.nav.item(0).text() == "模型" and dialog.windowTitle() == "设置"
    assert dialog.llm_page.test_button.text() == "测试连接" and dialog.close_button.text() == "关闭"
    assert "zh_CN" in (isolated_dirs["config"] / "settings.json").read_text(encoding="utf-8")

    choose_language(qtbot, window, "en")
    qtbot.waitUntil(lambda: window.project_view.settings_button.text() == "Settings")
    assert window.start_page.new_button.text() == "New Project…"
    assert window.start_page.provider_label.text() == "Model provider: Demo (offline script)"
