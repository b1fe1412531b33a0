<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>AboutDialog</name>
    <message>
        <source>About CrewAgent</source>
        <translation>关于 CrewAgent</translation>
    </message>
    <message>
        <source>A desktop workbench for LLM agents.</source>
        <translation>面向大模型智能体的桌面工作台。</translation>
    </message>
    <message>
        <source>Data folder: {data}&lt;br&gt;Settings folder: {config}&lt;br&gt;Qt {qt} · PySide6 {pyside} · Python {python}</source>
        <translation>数据文件夹：{data}&lt;br&gt;设置文件夹：{config}&lt;br&gt;Qt {qt} · PySide6 {pyside} · Python {python}</translation>
    </message>
    <message>
        <source>To report a problem, open an issue at &lt;a href=&quot;{url}&quot;&gt;{url}&lt;/a&gt; with what you did, what you expected, and the diagnostics below (Copy diagnostics). Conversation logs stay on your machine unless you attach them.</source>
        <translation>如需报告问题，请在 &lt;a href=&quot;{url}&quot;&gt;{url}&lt;/a&gt; 提交 issue，写明你做了什么、期望的结果，并附上下方的诊断信息（复制诊断信息）。除非你主动附上，会话记录只保存在你的电脑上。</translation>
    </message>
    <message>
        <source>Copy diagnostics</source>
        <translation>复制诊断信息</translation>
    </message>
    <message>
        <source>Open data folder</source>
        <translation>打开数据文件夹</translation>
    </message>
</context>
<context>
    <name>AgentMenuPanel</name>
    <message>
        <source>Starts this workflow in Run mode, in this conversation</source>
        <extracomment>Rows shown before the list scrolls. ``(number)``: the user picked this item (1-based, as typed).</extracomment>
        <translation>在此会话中以运行模式启动此工作流</translation>
    </message>
    <message>
        <source>Runs a file of its package</source>
        <translation>运行其工作流包中的文件</translation>
    </message>
    <message>
        <source>Close the menu</source>
        <translation>关闭菜单</translation>
    </message>
    <message>
        <source>“{query}” matches several items of {name}&apos;s menu. Which one?</source>
        <translation>“{query}”与 {name} 菜单中的多个条目匹配。要选哪一个？</translation>
    </message>
    <message>
        <source>{name}: {trigger}</source>
        <translation>{name}：{trigger}</translation>
    </message>
    <message>
        <source>{name}&apos;s menu has no item {query}. Pick one, or type its number or trigger:</source>
        <translation>{name} 的菜单中没有条目 {query}。请选择一项，或输入其编号或触发词：</translation>
    </message>
    <message>
        <source>{name}&apos;s menu: pick one, or type its number or trigger</source>
        <translation>{name} 的菜单：选择一项，或输入其编号或触发词</translation>
    </message>
    <message>
        <source>This item starts a workflow that no installed package provides.</source>
        <translation>此条目启动的工作流不在任何已安装的工作流包中。</translation>
    </message>
    <message>
        <source>This item runs a file of its package that is not a workflow; this version can only start workflows.</source>
        <translation>此条目运行其工作流包中一个不是工作流的文件；当前版本只能启动工作流。</translation>
    </message>
</context>
<context>
    <name>AppearancePage</name>
    <message>
        <source>Appearance</source>
        <extracomment>The user picked a theme or a language (not emitted by ``load``): apply it now.</extracomment>
        <translation>外观</translation>
    </message>
    <message>
        <source>Changes apply at once, without a restart.</source>
        <translation>更改立即生效，无需重启。</translation>
    </message>
    <message>
        <source>Look and language</source>
        <translation>外观与语言</translation>
    </message>
    <message>
        <source>Theme</source>
        <translation>主题</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>语言</translation>
    </message>
</context>
<context>
    <name>ApprovalDialog</name>
    <message>
        <source>Allow {tool}?</source>
        <extracomment>Characters of the arguments shown in the dialog. The decision: allow_once, allow_conversation, allow_always or deny. A command&apos;s grants cover its program only (&quot;git&quot;), and the buttons say so.</extracomment>
        <translation>允许 {tool}？</translation>
    </message>
    <message>
        <source>The assistant wants to run &lt;b&gt;{tool}&lt;/b&gt;</source>
        <translation>助手想要运行 &lt;b&gt;{tool}&lt;/b&gt;</translation>
    </message>
    <message>
        <source>Deny</source>
        <translation>拒绝</translation>
    </message>
    <message>
        <source>Allow once</source>
        <translation>允许一次</translation>
    </message>
    <message>
        <source>Allow in this conversation</source>
        <translation>在此会话中允许</translation>
    </message>
    <message>
        <source>Always allow {tool}</source>
        <translation>始终允许 {tool}</translation>
    </message>
    <message>
        <source>Allow {program} in this conversation</source>
        <translation>在此会话中允许 {program}</translation>
    </message>
    <message>
        <source>Saved in Settings → Tools; you can take it back there.</source>
        <translation>已保存在“设置 → 工具”中，可在那里撤销。</translation>
    </message>
</context>
<context>
    <name>ArtifactsModel</name>
    <message>
        <source>File</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>From</source>
        <translation>来源</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>state</source>
        <translation>状态文件</translation>
    </message>
    <message>
        <source>outside the project</source>
        <translation>在项目之外</translation>
    </message>
    <message>
        <source>written</source>
        <translation>已写入</translation>
    </message>
    <message>
        <source>not written yet</source>
        <translation>尚未写入</translation>
    </message>
</context>
<context>
    <name>AskUserForm</name>
    <message>
        <source>The assistant asks</source>
        <extracomment>The WIDGET_SUBMIT payload (a dict the receiver owns). The user closed the question without answering.</extracomment>
        <translation>助手提问</translation>
    </message>
    <message>
        <source>Submit</source>
        <translation>提交</translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Confirm</source>
        <translation>确认</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Fill in: {fields}</source>
        <translation>请填写：{fields}</translation>
    </message>
    <message>
        <source>Confirmed</source>
        <translation>已确认</translation>
    </message>
    <message>
        <source>Declined</source>
        <translation>已拒绝</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <source>no</source>
        <translation>否</translation>
    </message>
</context>
<context>
    <name>AttachmentStrip</name>
    <message>
        <source>A message takes at most {count} images.</source>
        <extracomment>The images attached changed (added, removed, taken). ``(reason)``: an image was not attached (not an image, too large, unreadable), one line. The last message sent with images until its user message is stored: ``(conversation_id, text, images)``; a send refused before anything was stored gets them back (Composer).</extracomment>
        <translation>一条消息最多附带 {count} 张图片。</translation>
    </message>
</context>
<context>
    <name>Composer</name>
    <message>
        <source>Message the agent, or press Enter on an empty line for its menu</source>
        <extracomment>Cells of the context meter ``[●●●○○]``. The meter&apos;s ``status`` property: the stylesheet colours each (app.qss, ``#contextMeter[status=...]``). &quot;Attach image…&quot; from the keyboard. Up in the empty box: the owner puts the user&apos;s last message back to edit (issue 18 item 18). ``(mime)``: images were pasted or dropped (image data or image files); handled at once. ``(text)``: the user sent a message (empty only in Agent mode: the menu, see ``set_accepts_empty``). The user asked to stop the running turn (Stop button or Esc). The conversation&apos;s tokens (and cost) so far, as the provider reported them (issue 17). Images attached to the message (issue 17): paste, drop, or &quot;Attach image…&quot; (Ctrl+Shift+I). Asks which image files to attach (the window&apos;s dialogs; None: the button does nothing). The model of the next turn takes images, and its name (for the refusal). Agent mode: an empty Enter is sent too (it asks for the agent&apos;s menu). Gives the user&apos;s last message of the conversation, for Up in an empty box (&quot;&quot; when none).</extracomment>
        <translation>给智能体发消息，或在空行按 Enter 查看其菜单</translation>
    </message>
    <message>
        <source>Message the assistant — Enter to send, Shift+Enter for a new line</source>
        <translation>给助手发消息 — Enter 发送，Shift+Enter 换行</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>发送</translation>
    </message>
    <message>
        <source>Send (Enter)</source>
        <translation>发送 (Enter)</translation>
    </message>
    <message>
        <source>■ Stop</source>
        <translation>■ 停止</translation>
    </message>
    <message>
        <source>Stop the answer (Esc)</source>
        <translation>停止回答 (Esc)</translation>
    </message>
    <message>
        <source>Attach image… ({shortcut}); you can also paste or drop images</source>
        <translation>附加图片…（{shortcut}）；也可以粘贴或拖入图片</translation>
    </message>
    <message>
        <source>Attach image</source>
        <translation>附加图片</translation>
    </message>
    <message>
        <source>Answering… press Esc or Stop to interrupt.</source>
        <translation>正在回答… 按 Esc 或“停止”可中断。</translation>
    </message>
    <message>
        <source>Stopping…</source>
        <translation>正在停止…</translation>
    </message>
    <message>
        <source>The images are still being read; send again in a moment.</source>
        <translation>图片仍在读取中；请稍后再发送。</translation>
    </message>
    <message>
        <source>How full the model&apos;s context is; shown after the first answer.</source>
        <translation>模型上下文的占用情况；首次回答后显示。</translation>
    </message>
    <message>
        <source>Context: {used} of {total} tokens ({status})</source>
        <translation>上下文：已用 {used} / {total} 个 token（{status}）</translation>
    </message>
    <message>
        <source>Tokens the provider reported for this conversation ({count} model calls)</source>
        <translation>提供方为本会话报告的令牌数（{count} 次模型调用）</translation>
    </message>
    <message>
        <source>normal</source>
        <translation>正常</translation>
    </message>
    <message>
        <source>getting full</source>
        <translation>接近上限</translation>
    </message>
    <message>
        <source>nearly full</source>
        <translation>即将占满</translation>
    </message>
    <message>
        <source>compressing</source>
        <translation>正在压缩</translation>
    </message>
</context>
<context>
    <name>ContextPage</name>
    <message>
        <source>Context</source>
        <extracomment>``llm.vision`` (issue 17): whether images are sent to the model; None: the model table.</extracomment>
        <translation>上下文</translation>
    </message>
    <message>
        <source>Each request carries the system prompt and as much recent history as fits these budgets; older messages are summarised or left out.</source>
        <translation>每次请求都包含系统提示词，以及在这些预算内能容纳的最近历史；更早的消息会被摘要或省略。</translation>
    </message>
    <message>
        <source>Budgets per request</source>
        <translation>每次请求的预算</translation>
    </message>
    <message>
        <source>Messages</source>
        <translation>消息</translation>
    </message>
    <message>
        <source> messages</source>
        <translation> 条消息</translation>
    </message>
    <message>
        <source>Characters</source>
        <translation>字符</translation>
    </message>
    <message>
        <source> characters</source>
        <translation> 个字符</translation>
    </message>
    <message>
        <source>Tokens</source>
        <translation>Token</translation>
    </message>
    <message>
        <source> tokens</source>
        <translation> 个 token</translation>
    </message>
    <message>
        <source>No limit</source>
        <translation>不限制</translation>
    </message>
    <message>
        <source>An upper limit per request, below the model&apos;s context window (set the window on the Model page).</source>
        <translation>每个请求的上限，低于模型的上下文窗口（窗口大小在“模型”页设置）。</translation>
    </message>
    <message>
        <source>Tool results</source>
        <translation>工具结果</translation>
    </message>
    <message>
        <source>Send earlier tool results back to the model</source>
        <translation>将之前的工具结果发回给模型</translation>
    </message>
    <message>
        <source>Images</source>
        <translation>图片</translation>
    </message>
    <message>
        <source>As the model table says (a model it does not list: sent)</source>
        <translation>按模型表判断（表中未列出的模型：发送）</translation>
    </message>
    <message>
        <source>The model accepts images</source>
        <translation>模型接受图片</translation>
    </message>
    <message>
        <source>The model does not accept images</source>
        <translation>模型不接受图片</translation>
    </message>
</context>
<context>
    <name>ConversationExporter</name>
    <message>
        <source>&amp;Export Conversation…</source>
        <extracomment>``(project_id, conversation_id, format, path)``: write the export (``Worker.export_conversation``).</extracomment>
        <translation>导出会话(&amp;E)…</translation>
    </message>
    <message>
        <source>Save the open conversation as Markdown, OpenAI JSON or JSON Lines</source>
        <translation>将当前会话保存为 Markdown、OpenAI JSON 或 JSON Lines</translation>
    </message>
    <message>
        <source>Open a conversation to export it.</source>
        <translation>请先打开一个会话再导出。</translation>
    </message>
    <message>
        <source>Exported to {path}, but: {problems}</source>
        <translation>已导出到 {path}，但：{problems}</translation>
    </message>
    <message>
        <source>Exported to {path}.</source>
        <translation>已导出到 {path}。</translation>
    </message>
</context>
<context>
    <name>ConversationHeader</name>
    <message>
        <source>No agents available yet</source>
        <extracomment>``(agent_id)``: the user picked an agent (not emitted by ``show_agent``). Workflow mode: the workflow picker, Start Workflow, the conversation&apos;s runs and Resume.</extracomment>
        <translation>暂无可用的智能体</translation>
    </message>
    <message>
        <source>The agent persona Agent mode answers with; saved with the conversation</source>
        <translation>智能体模式下用来回答的智能体角色；随会话保存</translation>
    </message>
    <message>
        <source>Agent:</source>
        <translation>智能体：</translation>
    </message>
    <message>
        <source>Plain chat with the model and the project&apos;s tools.</source>
        <translation>与模型直接聊天，可使用项目工具。</translation>
    </message>
    <message>
        <source>{count} · created {created}</source>
        <translation>{count} · 创建于 {created}</translation>
    </message>
</context>
<context>
    <name>ConversationView</name>
    <message>
        <source>Loading…</source>
        <extracomment>Edit on a user message: its text in the composer, the next Send replaces it (issue 18 item 12). &quot;Open full output&quot; opens a viewer window per tool result (issue 18). The TurnWorker&apos;s streamed text, tool calls and messages, into the timeline of the shown conversation. Run mode: the Workflow header&apos;s runs, starting or resuming one, the missing-package card.</extracomment>
        <translation>正在加载…</translation>
    </message>
    <message>
        <source>{n} damaged line(s) of this conversation were skipped.</source>
        <translation>已跳过此会话中 {n} 行损坏的记录。</translation>
    </message>
</context>
<context>
    <name>DecisionModel</name>
    <message>
        <source>From</source>
        <translation>从</translation>
    </message>
    <message>
        <source>To</source>
        <translation>到</translation>
    </message>
    <message>
        <source>Edge</source>
        <translation>分支</translation>
    </message>
    <message>
        <source>Reason</source>
        <translation>原因</translation>
    </message>
</context>
<context>
    <name>EmptyConversation</name>
    <message>
        <source>Pick a conversation</source>
        <translation>选择一个会话</translation>
    </message>
    <message>
        <source>Start a conversation</source>
        <translation>开始一个会话</translation>
    </message>
    <message>
        <source>Select one in the Works list on the left.</source>
        <translation>在左侧的“会话”列表中选择一个。</translation>
    </message>
    <message>
        <source>Use “+ New” or press Ctrl+Shift+N: Chat, Agent or Workflow.</source>
        <translation>点击“+ 新建”或按 Ctrl+Shift+N：聊天、智能体或工作流。</translation>
    </message>
</context>
<context>
    <name>FilePage</name>
    <message>
        <source>Loading…</source>
        <extracomment>``path``: the user wants the file opened by the desktop&apos;s default application.</extracomment>
        <translation>正在加载…</translation>
    </message>
    <message>
        <source>Open in System App</source>
        <translation>用系统应用打开</translation>
    </message>
    <message>
        <source>{name} is too large to preview here ({size:.1f} MB).</source>
        <translation>{name} 太大，无法在此预览（{size:.1f} MB）。</translation>
    </message>
    <message>
        <source>{name} is not a text file.</source>
        <translation>{name} 不是文本文件。</translation>
    </message>
</context>
<context>
    <name>FilesPanel</name>
    <message>
        <source>Artifacts</source>
        <extracomment>Opens a file or folder with the desktop&apos;s default application (replaced in tests). ``path``: open this file in a workspace tab (absolute path).</extracomment>
        <translation>产出文件</translation>
    </message>
    <message>
        <source>What the model wrote: the project&apos;s artifacts/ folder</source>
        <translation>模型写出的内容：项目的 artifacts/ 文件夹</translation>
    </message>
    <message>
        <source>All</source>
        <translation>全部</translation>
    </message>
    <message>
        <source>The whole project folder</source>
        <translation>整个项目文件夹</translation>
    </message>
    <message>
        <source>Nothing in artifacts/ yet.
Files the model writes will appear here.</source>
        <translation>artifacts/ 中还没有内容。
模型写出的文件会显示在这里。</translation>
    </message>
    <message>
        <source>This folder is empty.</source>
        <translation>此文件夹为空。</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>打开</translation>
    </message>
    <message>
        <source>Open in System App</source>
        <translation>用系统应用打开</translation>
    </message>
</context>
<context>
    <name>Images</name>
    <message>
        <source>{name} cannot be decoded as an image.</source>
        <extracomment>The side of a thumbnail&apos;s square, in pixels (composer chips and timeline rows).</extracomment>
        <translation>{name} 无法解码为图片。</translation>
    </message>
</context>
<context>
    <name>JumpToLatest</name>
    <message>
        <source>↓ Latest</source>
        <extracomment>Pixels above and below the pill inside the strip it has to itself.</extracomment>
        <translation>↓ 最新</translation>
    </message>
</context>
<context>
    <name>LlmPage</name>
    <message>
        <source>Model</source>
        <extracomment>How long the page waits for an answer before it gives up on a check (the worker bounds its own wait at 20 s; this only guards against an answer that never comes). The context window spin box&apos;s value for &quot;automatic&quot; (the provider&apos;s list, else known models). ``LlmDraft``: test the connection described by the fields as typed. ``LlmDraft``: fetch the provider&apos;s models (``GET /v1/models``). ``provider``: the key state of this provider is wanted (the provider choice changed). ``(provider, &quot;&quot;)``: remove the stored key of that provider. Model id -&gt; the window the provider&apos;s last model list reported (this base URL). Each provider&apos;s base URL and model as last shown, so a switch restores the provider&apos;s own.</extracomment>
        <translation>模型</translation>
    </message>
    <message>
        <source>Model provider</source>
        <translation>模型提供方</translation>
    </message>
    <message>
        <source>Where CrewAgent sends your conversations. The demo works offline with no setup; connect a real model with OpenAI or any OpenAI-compatible server (Ollama, LM Studio, vLLM…).</source>
        <translation>CrewAgent 将会话发送到哪里。演示模式离线可用、无需配置；也可以连接 OpenAI 或任何兼容 OpenAI 的服务器（Ollama、LM Studio、vLLM…）使用真实模型。</translation>
    </message>
    <message>
        <source>Connection</source>
        <translation>连接</translation>
    </message>
    <message>
        <source>Provider</source>
        <translation>提供方</translation>
    </message>
    <message>
        <source>Base URL</source>
        <translation>基础 URL</translation>
    </message>
    <message>
        <source>API key</source>
        <translation>API 密钥</translation>
    </message>
    <message>
        <source>Fetch models</source>
        <translation>获取模型</translation>
    </message>
    <message>
        <source>List the models the provider offers (GET /v1/models)</source>
        <translation>列出提供方的可用模型（GET /v1/models）</translation>
    </message>
    <message>
        <source>Remove key</source>
        <translation>移除密钥</translation>
    </message>
    <message>
        <source>Limits</source>
        <translation>限制</translation>
    </message>
    <message>
        <source>Timeout</source>
        <translation>超时</translation>
    </message>
    <message>
        <source> s</source>
        <translation> 秒</translation>
    </message>
    <message>
        <source>The longest wait for the first byte and between two streamed chunks.</source>
        <translation>等待首个字节以及两个流式片段之间的最长时间。</translation>
    </message>
    <message>
        <source> tokens</source>
        <translation> 个 token</translation>
    </message>
    <message>
        <source>Context window</source>
        <translation>上下文窗口</translation>
    </message>
    <message>
        <source>Automatic</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>Leave on Automatic to use what the provider reports or the known size of the model. Each request gets the window minus room for the answer.</source>
        <translation>保持“自动”即使用提供方报告的大小或该模型的已知大小。每个请求可用窗口减去为回答预留的部分。</translation>
    </message>
    <message>
        <source>Check</source>
        <translation>检查</translation>
    </message>
    <message>
        <source>Test Connection</source>
        <translation>测试连接</translation>
    </message>
    <message>
        <source>your setting</source>
        <translation>你的设置</translation>
    </message>
    <message>
        <source>from the provider</source>
        <translation>来自提供方</translation>
    </message>
    <message>
        <source>known model {model}</source>
        <translation>已知模型 {model}</translation>
    </message>
    <message>
        <source>default for unknown models</source>
        <translation>未知模型的默认值</translation>
    </message>
    <message>
        <source>Context window: {tokens} tokens ({source})</source>
        <translation>上下文窗口：{tokens} 个 token（{source}）</translation>
    </message>
    <message>
        <source>Not needed</source>
        <translation>不需要</translation>
    </message>
    <message>
        <source>A key is stored; type a new one to replace it</source>
        <translation>已保存密钥；输入新密钥即可替换</translation>
    </message>
    <message>
        <source>Paste your API key (e.g. sk-…)</source>
        <translation>粘贴你的 API 密钥（如 sk-…）</translation>
    </message>
    <message>
        <source>Keys are kept in the system keyring ({backend}), never in settings.json.</source>
        <translation>密钥保存在系统密钥环（{backend}）中，绝不写入 settings.json。</translation>
    </message>
    <message>
        <source>No system keyring is available: the key is stored in a file only you can read, but it is not encrypted.</source>
        <translation>系统密钥环不可用：密钥保存在仅你可读的文件中，但未加密。</translation>
    </message>
    <message>
        <source>Connecting…</source>
        <translation>正在连接…</translation>
    </message>
    <message>
        <source>Fetching the model list…</source>
        <translation>正在获取模型列表…</translation>
    </message>
    <message>
        <source>Connected.</source>
        <translation>已连接。</translation>
    </message>
    <message>
        <source>The API key was refused.</source>
        <translation>API 密钥被拒绝。</translation>
    </message>
    <message>
        <source>The server could not be reached.</source>
        <translation>无法连接到服务器。</translation>
    </message>
    <message>
        <source>The server did not answer in time.</source>
        <translation>服务器未及时响应。</translation>
    </message>
    <message>
        <source>Wrong base URL.</source>
        <translation>基础 URL 有误。</translation>
    </message>
    <message>
        <source>The settings are incomplete.</source>
        <translation>设置不完整。</translation>
    </message>
    <message>
        <source>The connection failed.</source>
        <translation>连接失败。</translation>
    </message>
    <message>
        <source>No model list: {error}</source>
        <translation>无法获取模型列表：{error}</translation>
    </message>
    <message>
        <source>{count} models available.</source>
        <translation>共 {count} 个可用模型。</translation>
    </message>
    <message>
        <source>No answer. Check the base URL and your network, then try again.</source>
        <translation>没有响应。请检查基础 URL 和网络后重试。</translation>
    </message>
</context>
<context>
    <name>LocalServerOffer</name>
    <message>
        <source>Found running: {name} at {url} ({count} models)</source>
        <extracomment>``LocalServerFound``: the user wants this server as the provider. The rows&apos; &quot;Use&quot; buttons, in the order of the servers found (for tests and focus order).</extracomment>
        <translation>发现正在运行：{name}，地址 {url}（{count} 个模型）</translation>
    </message>
    <message>
        <source>Use it</source>
        <translation>使用</translation>
    </message>
</context>
<context>
    <name>LogModel</name>
    <message>
        <source>Time</source>
        <extracomment>Characters of a thinking entry (the timeline shows the reasoning in full).</extracomment>
        <translation>时间</translation>
    </message>
    <message>
        <source>Level</source>
        <translation>级别</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>消息</translation>
    </message>
    <message>
        <source>thinking</source>
        <translation>思考</translation>
    </message>
    <message>
        <source>tool</source>
        <translation>工具</translation>
    </message>
    <message>
        <source>info</source>
        <translation>信息</translation>
    </message>
    <message>
        <source>warn</source>
        <translation>警告</translation>
    </message>
    <message>
        <source>error</source>
        <translation>错误</translation>
    </message>
</context>
<context>
    <name>LogPanel</name>
    <message>
        <source>Logs</source>
        <extracomment>The user closed the panel (its close button).</extracomment>
        <translation>日志</translation>
    </message>
    <message>
        <source>Clear</source>
        <translation>清空</translation>
    </message>
    <message>
        <source>Clear the log (Ctrl+K while the log has the focus)</source>
        <translation>清空日志（日志获得焦点时按 Ctrl+K）</translation>
    </message>
    <message>
        <source>Hide</source>
        <translation>隐藏</translation>
    </message>
    <message>
        <source>Hide the log (Ctrl+L)</source>
        <translation>隐藏日志（Ctrl+L）</translation>
    </message>
    <message>
        <source>Turn started ({mode} mode)</source>
        <translation>回合开始（{mode} 模式）</translation>
    </message>
    <message>
        <source>Model call {step} ({model})</source>
        <translation>第 {step} 次模型调用（{model}）</translation>
    </message>
    <message>
        <source>✓ {tool} ok ({ms} ms)</source>
        <translation>✓ {tool} 成功（{ms} 毫秒）</translation>
    </message>
    <message>
        <source>✗ {tool} failed: {code}</source>
        <translation>✗ {tool} 失败：{code}</translation>
    </message>
    <message>
        <source>The workflow is complete.</source>
        <translation>工作流已完成。</translation>
    </message>
    <message>
        <source>Run state saved: now on {node}, {count} step(s) done.</source>
        <translation>运行状态已保存：当前在 {node}，已完成 {count} 步。</translation>
    </message>
    <message>
        <source>Turn failed: {message}</source>
        <translation>回合失败：{message}</translation>
    </message>
    <message>
        <source>Turn stopped.</source>
        <translation>回合已停止。</translation>
    </message>
    <message>
        <source>Turn ended: waiting for your answer.</source>
        <translation>回合结束：等待你的回答。</translation>
    </message>
    <message>
        <source>Turn completed.</source>
        <translation>回合完成。</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>&amp;New Project…</source>
        <extracomment>Milliseconds a close waits for running turns to stop and persist what they stopped. Ask the worker for the settings (once at start; ``settings_changed`` answers). Stop every running turn (the window is closing). Ask the turn worker which provider and model the next turn uses (``provider_changed``). Look for model servers on this computer (``Worker.probe_local_servers``): once, at a start that still runs on the demo provider. Ask the worker for the agents Agent mode offers (``agents_loaded``). Ask the worker for the installed workflow packages (``packages_loaded``). ``(path)``: install a ``.bmad`` file or a package folder (``Worker.import_package``).</extracomment>
        <translation>新建项目(&amp;N)…</translation>
    </message>
    <message>
        <source>Create a project folder</source>
        <translation>创建项目文件夹</translation>
    </message>
    <message>
        <source>&amp;Open Project…</source>
        <translation>打开项目(&amp;O)…</translation>
    </message>
    <message>
        <source>Open an existing project folder</source>
        <translation>打开已有的项目文件夹</translation>
    </message>
    <message>
        <source>New &amp;Conversation…</source>
        <translation>新建会话(&amp;C)…</translation>
    </message>
    <message>
        <source>Start a conversation: Chat, Agent or Workflow</source>
        <translation>开始会话：聊天、智能体或工作流</translation>
    </message>
    <message>
        <source>&amp;Exit Project</source>
        <translation>退出项目(&amp;E)</translation>
    </message>
    <message>
        <source>Close the project and return to the Start page</source>
        <translation>关闭项目并返回开始页</translation>
    </message>
    <message>
        <source>&amp;Settings…</source>
        <translation>设置(&amp;S)…</translation>
    </message>
    <message>
        <source>Model provider, tools, context budgets, theme and language</source>
        <translation>模型提供方、工具、上下文预算、主题和语言</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>Quit CrewAgent</source>
        <translation>退出 CrewAgent</translation>
    </message>
    <message>
        <source>&amp;Keyboard Shortcuts</source>
        <translation>键盘快捷键(&amp;K)</translation>
    </message>
    <message>
        <source>Every keyboard shortcut of the window</source>
        <translation>窗口中的所有键盘快捷键</translation>
    </message>
    <message>
        <source>&amp;About CrewAgent</source>
        <translation>关于 CrewAgent(&amp;A)</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>The folder {folder} does not exist.</source>
        <translation>文件夹 {folder} 不存在。</translation>
    </message>
    <message>
        <source>{folder} is not a CrewAgent project: it has no .crewagent.json. Choose it with Open Project to make it one.</source>
        <translation>{folder} 不是 CrewAgent 项目：其中没有 .crewagent.json。请通过“打开项目”选择它，即可将其设为项目。</translation>
    </message>
    <message>
        <source>{label} (not ready)</source>
        <translation>{label}（未就绪）</translation>
    </message>
    <message>
        <source>Workflow: {workflow}</source>
        <translation>工作流：{workflow}</translation>
    </message>
    <message>
        <source> (and {count} more problems)</source>
        <translation>（另有 {count} 个问题）</translation>
    </message>
    <message>
        <source>{path} was not imported: {problem}{more}</source>
        <translation>{path} 未导入：{problem}{more}</translation>
    </message>
    <message>
        <source>Stopping the running answer before closing…</source>
        <translation>正在停止当前回答，然后关闭…</translation>
    </message>
</context>
<context>
    <name>McpPage</name>
    <message>
        <source>MCP</source>
        <translation>MCP</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <source>no</source>
        <translation>否</translation>
    </message>
    <message>
        <source>starting…</source>
        <translation>正在启动…</translation>
    </message>
    <message>
        <source>running · {count} tool(s)</source>
        <translation>运行中 · {count} 个工具</translation>
    </message>
    <message>
        <source>works · {count} tool(s) · stopped after the test</source>
        <translation>可用 · {count} 个工具 · 测试后已停止</translation>
    </message>
    <message>
        <source>error: {message}</source>
        <translation>错误：{message}</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>{name} (copy)</source>
        <translation>{name}（副本）</translation>
    </message>
    <message>
        <source>Reading {path}…</source>
        <translation>正在读取 {path}…</translation>
    </message>
    <message>
        <source>Nothing was imported: {problem}</source>
        <translation>未导入任何内容：{problem}</translation>
    </message>
    <message>
        <source>Imported: {ids}. Apply or Save keeps them.</source>
        <translation>已导入：{ids}。点击“应用”或“保存”后生效。</translation>
    </message>
    <message>
        <source>MCP servers</source>
        <translation>MCP 服务器</translation>
    </message>
    <message>
        <source>MCP servers give the model more tools (named mcp__server__tool). A server starts when a turn first needs its tools and stops when the app quits. Secret environment values and headers are kept in the keyring.</source>
        <translation>MCP 服务器为模型提供更多工具（名为 mcp__服务器__工具）。服务器在某轮对话首次需要其工具时启动，在应用退出时停止。机密的环境变量值和请求头保存在系统钥匙串中。</translation>
    </message>
    <message>
        <source>Let the model use the tools of the enabled servers</source>
        <translation>允许模型使用已启用服务器的工具</translation>
    </message>
    <message>
        <source>Servers</source>
        <translation>服务器</translation>
    </message>
    <message>
        <source>Configured</source>
        <translation>已配置</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Transport</source>
        <translation>传输方式</translation>
    </message>
    <message>
        <source>Enabled</source>
        <translation>启用</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Add…</source>
        <translation>添加…</translation>
    </message>
    <message>
        <source>Edit…</source>
        <translation>编辑…</translation>
    </message>
    <message>
        <source>Duplicate</source>
        <translation>复制</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>Import…</source>
        <translation>导入…</translation>
    </message>
    <message>
        <source>Test Connection</source>
        <translation>测试连接</translation>
    </message>
    <message>
        <source>Add the servers of a Claude-Desktop-style {&quot;mcpServers&quot;: …} JSON file</source>
        <translation>添加 Claude Desktop 风格的 {&quot;mcpServers&quot;: …} JSON 文件中的服务器</translation>
    </message>
    <message>
        <source>Tools</source>
        <translation>工具</translation>
    </message>
    <message>
        <source>Server log</source>
        <translation>服务器日志</translation>
    </message>
    <message>
        <source>Tool</source>
        <translation>工具</translation>
    </message>
    <message>
        <source>Description</source>
        <translation>说明</translation>
    </message>
</context>
<context>
    <name>McpServerForm</name>
    <message>
        <source>Another server already has the id {id}.</source>
        <translation>已有其他服务器使用 ID {id}。</translation>
    </message>
    <message>
        <source>Arguments: {problem}</source>
        <translation>参数：{problem}</translation>
    </message>
    <message>
        <source>Environment</source>
        <translation>环境变量</translation>
    </message>
    <message>
        <source>Headers</source>
        <translation>请求头</translation>
    </message>
    <message>
        <source>{what}, line {number}: write NAME=value.</source>
        <translation>{what}，第 {number} 行：请写成 NAME=value。</translation>
    </message>
    <message>
        <source>New MCP server</source>
        <translation>新建 MCP 服务器</translation>
    </message>
    <message>
        <source>Edit MCP server</source>
        <translation>编辑 MCP 服务器</translation>
    </message>
    <message>
        <source>Id</source>
        <translation>ID</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Enabled</source>
        <translation>启用</translation>
    </message>
    <message>
        <source>Transport</source>
        <translation>传输方式</translation>
    </message>
    <message>
        <source>Command</source>
        <translation>命令</translation>
    </message>
    <message>
        <source>Arguments</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>Working folder</source>
        <translation>工作文件夹</translation>
    </message>
    <message>
        <source>URL</source>
        <translation>URL</translation>
    </message>
    <message>
        <source>Tool timeout</source>
        <translation>工具超时</translation>
    </message>
    <message>
        <source>Start timeout</source>
        <translation>启动超时</translation>
    </message>
    <message>
        <source>Trusted</source>
        <translation>受信任</translation>
    </message>
    <message>
        <source>stdio (a command)</source>
        <translation>stdio（命令）</translation>
    </message>
    <message>
        <source>Streamable HTTP</source>
        <translation>可流式 HTTP</translation>
    </message>
    <message>
        <source>HTTP + SSE (legacy)</source>
        <translation>HTTP + SSE（旧版）</translation>
    </message>
    <message>
        <source>Offer this server&apos;s tools to the model</source>
        <translation>向模型提供此服务器的工具</translation>
    </message>
    <message>
        <source>Run its tools without asking for approval</source>
        <translation>运行其工具时无需审批</translation>
    </message>
    <message>
        <source> s</source>
        <translation> 秒</translation>
    </message>
    <message>
        <source>How long the server may take to start and answer initialize</source>
        <translation>服务器启动并响应 initialize 的最长时间</translation>
    </message>
    <message>
        <source>letters, digits, - and _ (its tools are mcp__id__tool)</source>
        <translation>字母、数字、- 和 _（其工具名为 mcp__id__工具）</translation>
    </message>
    <message>
        <source>NAME=value, one a line; the values are kept in the keyring, never in settings.json.</source>
        <translation>每行一个 NAME=value；值保存在系统钥匙串中，绝不写入 settings.json。</translation>
    </message>
    <message>
        <source>Done</source>
        <translation>完成</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
</context>
<context>
    <name>MessageBar</name>
    <message>
        <source>Dismiss</source>
        <extracomment>The bar was closed by the user.</extracomment>
        <translation>关闭</translation>
    </message>
</context>
<context>
    <name>MessageEdit</name>
    <message>
        <source>Editing a message: Send replaces it and the answers after it (the old ones stay in the log). Esc cancels.</source>
        <translation>正在编辑消息：发送后将替换这条消息及其后的回答（旧内容仍保留在记录中）。按 Esc 取消。</translation>
    </message>
</context>
<context>
    <name>MissingPackageCard</name>
    <message>
        <source>The package of this run is not installed</source>
        <extracomment>``(package_label)``: the user wants to import the package again (&quot;project-brief 1.0.0&quot;). The user goes back: the conversation leaves Run mode, the run is kept.</extracomment>
        <translation>此运行所需的工作流包未安装</translation>
    </message>
    <message>
        <source>Run {run} of “{workflow}” needs the package {package}, which is no longer installed. Import it again to go on with the run, or go back and keep the conversation without it.</source>
        <translation>“{workflow}”的运行 {run} 需要工作流包 {package}，但该工作流包已不再安装。请重新导入它以继续运行，或返回并在没有它的情况下保留此会话。</translation>
    </message>
    <message>
        <source>Re-import Package…</source>
        <translation>重新导入工作流包…</translation>
    </message>
    <message>
        <source>Back</source>
        <translation>返回</translation>
    </message>
    <message>
        <source>Leave Run mode; the run is kept and Resume comes back to it</source>
        <translation>离开运行模式；运行会保留，点击“继续运行”可回到它</translation>
    </message>
</context>
<context>
    <name>ModeSwitcher</name>
    <message>
        <source>Switch this conversation to {mode}; its history stays</source>
        <extracomment>The switcher&apos;s segments, in order (``run`` is shown as Workflow). ``(mode)``: the user picked a mode (chat, agent or run); not emitted by ``set_mode``.</extracomment>
        <translation>将此会话切换到{mode}模式；历史记录保留</translation>
    </message>
</context>
<context>
    <name>ModelPicker</name>
    <message>
        <source>Model for the next message</source>
        <extracomment>``LlmDraft``: list the active provider&apos;s models (``Worker.list_models``). ``{&quot;llm&quot;: {&quot;model&quot;: id}}``: save the model the user picked (``Worker.save_settings``).</extracomment>
        <translation>下一条消息使用的模型</translation>
    </message>
    <message>
        <source>The provider&apos;s model list could not be read: {error}</source>
        <translation>无法读取提供方的模型列表：{error}</translation>
    </message>
</context>
<context>
    <name>NewProjectDialog</name>
    <message>
        <source>New Project</source>
        <translation>新建项目</translation>
    </message>
    <message>
        <source>My project</source>
        <translation>我的项目</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Location</source>
        <translation>位置</translation>
    </message>
    <message>
        <source>Create Project</source>
        <translation>创建项目</translation>
    </message>
    <message>
        <source>A project is a folder. CrewAgent adds a small .crewagent.json file and an artifacts folder.</source>
        <translation>项目就是一个文件夹。CrewAgent 会在其中添加一个小的 .crewagent.json 文件和一个 artifacts 文件夹。</translation>
    </message>
    <message>
        <source>Choose where to create the project</source>
        <translation>选择创建项目的位置</translation>
    </message>
    <message>
        <source>Folder: {folder}</source>
        <translation>文件夹：{folder}</translation>
    </message>
</context>
<context>
    <name>OutputViewer</name>
    <message>
        <source>Output of {tool}</source>
        <extracomment>Characters appended per step (cut after a newline where there is one, so lines arrive whole). A feeding tick stops once it has used this long, and lets the event loop run. Characters lower-cased and counted per step of a match count. Typing in the find field waits this long for the next key before searching. ``(path, text)``: write the text there (``Worker.save_text``); ``saved`` answers. The whole text is in the editor. Counting the matches of ``_count_query`` from ``_count_at`` on (None: not counting).</extracomment>
        <translation>{tool} 的输出</translation>
    </message>
    <message>
        <source>Find (Ctrl+F)</source>
        <translation>查找 (Ctrl+F)</translation>
    </message>
    <message>
        <source>Previous</source>
        <translation>上一个</translation>
    </message>
    <message>
        <source>Previous match (Shift+Enter)</source>
        <translation>上一个匹配 (Shift+Enter)</translation>
    </message>
    <message>
        <source>Next</source>
        <translation>下一个</translation>
    </message>
    <message>
        <source>Next match (Enter)</source>
        <translation>下一个匹配 (Enter)</translation>
    </message>
    <message>
        <source>Wrap lines</source>
        <translation>自动换行</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <source>Copy the selection, or the whole output when nothing is selected</source>
        <translation>复制选中的文本；未选中时复制全部输出</translation>
    </message>
    <message>
        <source>Save as…</source>
        <translation>另存为…</translation>
    </message>
    <message>
        <source>Saving to {path}…</source>
        <translation>正在保存到 {path}…</translation>
    </message>
    <message>
        <source>Loading the full output…</source>
        <translation>正在加载完整输出…</translation>
    </message>
    <message>
        <source>Loading… {percent}%</source>
        <translation>正在加载… {percent}%</translation>
    </message>
    <message>
        <source>{chars} characters · {lines} lines</source>
        <translation>{chars} 个字符 · {lines} 行</translation>
    </message>
    <message>
        <source>Save the output as</source>
        <translation>将输出另存为</translation>
    </message>
    <message>
        <source>Saved to {path}</source>
        <translation>已保存到 {path}</translation>
    </message>
    <message>
        <source>Counting…</source>
        <translation>正在计数…</translation>
    </message>
    <message>
        <source>No matches</source>
        <translation>无匹配</translation>
    </message>
    <message>
        <source>{current} of {total}</source>
        <translation>第 {current} 个，共 {total} 个</translation>
    </message>
    <message>
        <source>{total} matches</source>
        <translation>{total} 个匹配</translation>
    </message>
</context>
<context>
    <name>PackageModels</name>
    <message>
        <source>(the whole file)</source>
        <translation>（整个文件）</translation>
    </message>
    <message>
        <source>File</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>Field</source>
        <translation>字段</translation>
    </message>
    <message>
        <source>Problem</source>
        <translation>问题</translation>
    </message>
    <message>
        <source>Package</source>
        <translation>工作流包</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>详情</translation>
    </message>
    <message>
        <source>Workflow: {name}</source>
        <translation>工作流：{name}</translation>
    </message>
    <message>
        <source>Agent: {name}</source>
        <translation>智能体：{name}</translation>
    </message>
    <message>
        <source>{name} (cannot be loaded)</source>
        <translation>{name}（无法加载）</translation>
    </message>
    <message>
        <source>{count} problem(s)</source>
        <translation>{count} 个问题</translation>
    </message>
</context>
<context>
    <name>PackagesPage</name>
    <message>
        <source>Packages</source>
        <extracomment>``path``: install this .bmad file or package folder (``Worker.import_package``). ``(package_id, confirmed)``: uninstall this package (``Worker.remove_package``). The installed packages are wanted (``Worker.load_packages``).</extracomment>
        <translation>工作流包</translation>
    </message>
    <message>
        <source>Workflow packages bring workflows for Run mode and agents for Agent mode. Installing or removing one takes effect at once.</source>
        <translation>工作流包为运行模式提供工作流，为智能体模式提供智能体。安装或移除后立即生效。</translation>
    </message>
    <message>
        <source>Import</source>
        <translation>导入</translation>
    </message>
    <message>
        <source>Import .bmad File…</source>
        <translation>导入 .bmad 文件…</translation>
    </message>
    <message>
        <source>Import Folder…</source>
        <translation>导入文件夹…</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <source>Copy the selected problems (all when none is selected)</source>
        <translation>复制选中的问题（未选中时复制全部）</translation>
    </message>
    <message>
        <source>Installed</source>
        <translation>已安装</translation>
    </message>
    <message>
        <source>Remove…</source>
        <translation>移除…</translation>
    </message>
    <message>
        <source>Importing {name}…</source>
        <translation>正在导入 {name}…</translation>
    </message>
    <message>
        <source>✓ Installed {name} {version}: {workflows} workflow(s), {agents} agent(s).</source>
        <translation>✓ 已安装 {name} {version}：{workflows} 个工作流，{agents} 个智能体。</translation>
    </message>
    <message>
        <source>✕ {name} was not installed. Fix these {count} problem(s) and import it again:</source>
        <translation>✕ 未安装 {name}。请修正以下 {count} 个问题后重新导入：</translation>
    </message>
    <message>
        <source>{name} was not installed: {reason}</source>
        <translation>未安装 {name}：{reason}</translation>
    </message>
    <message>
        <source>Removing {name}…</source>
        <translation>正在移除 {name}…</translation>
    </message>
    <message>
        <source>{project}: workflow {workflow} (run {run}, {phase})</source>
        <translation>{project}：工作流 {workflow}（运行 {run}，{phase}）</translation>
    </message>
    <message>
        <source>{name} was kept.</source>
        <translation>已保留 {name}。</translation>
    </message>
    <message>
        <source>Removed {name}.</source>
        <translation>已移除 {name}。</translation>
    </message>
</context>
<context>
    <name>ProgressModel</name>
    <message>
        <source>Step</source>
        <extracomment>The status marks (🟢 completed, 🔵 current, ⚪ pending), drawn rather than typed: an emoji font is not on every desktop, and a missing one shows empty boxes. The row&apos;s value (StepView, Decision, ToolCallView or ArtifactView). A step&apos;s status (completed, current, pending), or a node id. An artifact&apos;s absolute path (&quot;&quot; when it leaves the project). ``headers()`` as last translated: views ask for them many times per show (140 calls when the panel appears), each a few ``tr()`` calls; dropped by ``retranslate``. The number of columns (``headers()`` translates, so it is not called for each cell).</extracomment>
        <translation>步骤</translation>
    </message>
    <message>
        <source>Agent</source>
        <translation>智能体</translation>
    </message>
    <message>
        <source>Type</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>step</source>
        <translation>步骤</translation>
    </message>
    <message>
        <source>decision</source>
        <translation>决策</translation>
    </message>
    <message>
        <source>merge</source>
        <translation>汇合</translation>
    </message>
    <message>
        <source>end</source>
        <translation>结束</translation>
    </message>
    <message>
        <source>subworkflow</source>
        <translation>子工作流</translation>
    </message>
    <message>
        <source>completed</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>current</source>
        <translation>进行中</translation>
    </message>
    <message>
        <source>pending</source>
        <translation>待处理</translation>
    </message>
</context>
<context>
    <name>ProjectDialogs</name>
    <message>
        <source>Open Project</source>
        <extracomment>What to do with unsaved settings when the dialog closes. The runs a removal confirmation lists by name (the rest are counted, and listed under Details). The window-state key of the folder the last project was created in.</extracomment>
        <translation>打开项目</translation>
    </message>
    <message>
        <source>{folder} is not a CrewAgent project yet.</source>
        <translation>{folder} 还不是 CrewAgent 项目。</translation>
    </message>
    <message>
        <source>Make it one? CrewAgent adds a small .crewagent.json file and an artifacts folder; nothing else changes.</source>
        <translation>要将其设为项目吗？CrewAgent 会添加一个小的 .crewagent.json 文件和一个 artifacts 文件夹，其他内容不会改动。</translation>
    </message>
    <message>
        <source>Make It a Project</source>
        <translation>设为项目</translation>
    </message>
    <message>
        <source>Import a Workflow Package</source>
        <translation>导入工作流包</translation>
    </message>
    <message>
        <source>Import the package {package}</source>
        <translation>导入工作流包 {package}</translation>
    </message>
    <message>
        <source>Workflow packages (*.bmad *.zip);;All files (*)</source>
        <translation>工作流包 (*.bmad *.zip);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Import a Package Folder</source>
        <translation>导入工作流包文件夹</translation>
    </message>
    <message>
        <source>Import MCP Servers</source>
        <translation>导入 MCP 服务器</translation>
    </message>
    <message>
        <source>MCP server settings (*.json);;All files (*)</source>
        <translation>MCP 服务器设置 (*.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Remove Package</source>
        <translation>移除工作流包</translation>
    </message>
    <message>
        <source>{count} run(s) use {package}. Remove it anyway?</source>
        <translation>有 {count} 个运行使用 {package}。仍要移除吗？</translation>
    </message>
    <message>
        <source>… and {more} more</source>
        <translation>… 以及另外 {more} 个</translation>
    </message>
    <message>
        <source>These runs cannot continue until the package is imported again. Their conversations and files are kept.</source>
        <translation>在重新导入该工作流包之前，这些运行无法继续。它们的会话和文件会保留。</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <source>Keep</source>
        <translation>保留</translation>
    </message>
    <message>
        <source>Unsaved Settings</source>
        <translation>未保存的设置</translation>
    </message>
    <message>
        <source>Save the changes you made in Settings?</source>
        <translation>要保存你在设置中所做的更改吗？</translation>
    </message>
    <message>
        <source>If you discard them, the settings stay as they were.</source>
        <translation>如果放弃，设置将保持原样。</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>保存</translation>
    </message>
    <message>
        <source>Discard</source>
        <translation>放弃</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Attach Images</source>
        <translation>附加图片</translation>
    </message>
    <message>
        <source>Images (*.png *.jpg *.jpeg *.webp *.gif)</source>
        <translation>图片 (*.png *.jpg *.jpeg *.webp *.gif)</translation>
    </message>
    <message>
        <source>Markdown (*.md)</source>
        <translation>Markdown (*.md)</translation>
    </message>
    <message>
        <source>OpenAI messages JSON (*.json)</source>
        <translation>OpenAI messages JSON (*.json)</translation>
    </message>
    <message>
        <source>JSON Lines log (*.jsonl)</source>
        <translation>JSON Lines 日志 (*.jsonl)</translation>
    </message>
    <message>
        <source>Export Conversation</source>
        <translation>导出会话</translation>
    </message>
</context>
<context>
    <name>ProjectView</name>
    <message>
        <source>Conversation</source>
        <extracomment>``(text)``: a passing notice of the Conversation tab, for the status bar. ``(project_id, entry_type)``: create a conversation of that type (chat, agent, run). The user wants to leave the project and go back to the Start page. The user wants the Settings dialog (the sidebar&apos;s Settings button). ``(project_id, conversation_id, title)``: rename a conversation (``Worker.rename_conversation``). ``(project_id, conversation_id)``: delete a conversation, confirmed by the user. ``(project_id, query)``: search the message text of the project&apos;s conversations. ``path``: read a project file for its tab (``Worker.read_project_file``). ``message``: a notice for the message bar (e.g. an empty name was refused). ``(project_id, conversation_id)``: the selected conversation changed (&quot;&quot; when none). ``(project_id)``: create a Workflow conversation with the built-in example picked (``Worker.try_workflow``).</extracomment>
        <translation>会话</translation>
    </message>
    <message>
        <source>Works</source>
        <extracomment>Subagents&apos; conversations, read-only (opened from a Task part; fed by the main window).</extracomment>
        <translation>会话</translation>
    </message>
    <message>
        <source>Files</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>Exit Project</source>
        <translation>退出项目</translation>
    </message>
    <message>
        <source>Back to the Start page</source>
        <translation>返回开始页</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>Model provider, tools, context budgets, theme and language (Ctrl+,)</source>
        <translation>模型提供方、工具、上下文预算、主题和语言 (Ctrl+,)</translation>
    </message>
</context>
<context>
    <name>RecentProjectDelegate</name>
    <message>
        <source>Folder missing</source>
        <translation>文件夹丢失</translation>
    </message>
</context>
<context>
    <name>RecentProjectsModel</name>
    <message>
        <source>{root}
This folder is missing or is no longer a project.</source>
        <extracomment>the whole RecentProjectEntry False when the folder (or its .crewagent.json) has gone missing the whole ConversationSummary True while a turn runs in the conversation</extracomment>
        <translation>{root}
此文件夹已丢失或不再是项目。</translation>
    </message>
</context>
<context>
    <name>RunWorkspace</name>
    <message>
        <source>Progress</source>
        <extracomment>``(project_id, conversation_id)``: read this conversation&apos;s run (``Worker.load_run``). ``path``: open this file read-only in a file tab (an artifact, a step file). ``(bool)``: the user expanded (True) or collapsed the panel. ``(bool)``: the panel appeared (the conversation has a run) or went away.</extracomment>
        <translation>进度</translation>
    </message>
    <message>
        <source>Graph</source>
        <translation>流程图</translation>
    </message>
    <message>
        <source>Tool Calls</source>
        <translation>工具调用</translation>
    </message>
    <message>
        <source>Artifacts</source>
        <translation>产出文件</translation>
    </message>
    <message>
        <source>Decision log</source>
        <translation>决策记录</translation>
    </message>
    <message>
        <source>Ctrl+wheel or +/− to zoom, drag to pan; click a step to open its file.</source>
        <translation>Ctrl+滚轮或 +/− 缩放，拖动平移；点击步骤可打开其文件。</translation>
    </message>
    <message>
        <source>Double-click a file to open it in a tab.</source>
        <translation>双击文件可在标签页中打开。</translation>
    </message>
    <message>
        <source>Hide the Run workspace</source>
        <translation>隐藏运行工作区</translation>
    </message>
    <message>
        <source>Show the Run workspace</source>
        <translation>显示运行工作区</translation>
    </message>
    <message>
        <source>idle</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>waiting for you</source>
        <translation>等待你的输入</translation>
    </message>
    <message>
        <source>completed</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>ok</source>
        <extracomment>Milliseconds events are gathered before the run is read again (a burst of writes is one read). The same while a turn of this conversation runs: the engine&apos;s progress reports update the steps at once, so the rest (tool calls, decisions, artifacts) can wait a little, and each tool call&apos;s own file events (state, audit) fold into one read instead of several.</extracomment>
        <translation>成功</translation>
    </message>
    <message>
        <source>Result: {result}</source>
        <translation>结果：{result}</translation>
    </message>
    <message>
        <source>Call id: {id}</source>
        <translation>调用 ID：{id}</translation>
    </message>
    <message>
        <source>Approval: {approval}</source>
        <translation>批准：{approval}</translation>
    </message>
</context>
<context>
    <name>RunWorkspaceLayout</name>
    <message>
        <source>Show or hide the logs</source>
        <translation>显示或隐藏日志</translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <source>Saved. The changes are in effect.</source>
        <extracomment>While the dialog is open, how often it asks whether settings.json changed on disk (&quot;Always allow&quot; in an approval, another process, a hand edit): a stat on the worker thread, nothing more. ``{section: {key: value}}``: save these settings (``Worker.save_settings``). ``(provider, key)``: keep this API key (&quot;&quot; removes it) (``Worker.set_api_key``). ``provider``: tell whether that provider has a key stored (``Worker.load_api_key_state``). ``LlmDraft``: test the connection as typed (``Worker.test_connection``). ``LlmDraft``: fetch the model list (``Worker.list_models``). Re-read settings.json if it changed on disk (``Worker.refresh_settings``). Look for model servers running on this computer (``Worker.probe_local_servers``). The settings the pages were loaded from (a JSON dump): edits are what differs from it. Installs and removes packages itself (its signals are wired to the worker by MainWindow). MCP servers (issue 12): its secrets, tests and imports are wired to ``Worker.mcp`` by ui.wiring.</extracomment>
        <translation>已保存，更改已生效。</translation>
    </message>
    <message>
        <source>Nothing was saved: fix the highlighted values.</source>
        <translation>未保存任何内容：请修正标出的值。</translation>
    </message>
    <message>
        <source>Saving…</source>
        <translation>正在保存…</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>保存</translation>
    </message>
    <message>
        <source>Apply</source>
        <translation>应用</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
</context>
<context>
    <name>ShortcutSheet</name>
    <message>
        <source>Show this list of shortcuts</source>
        <extracomment>Open the shortcuts sheet.</extracomment>
        <translation>显示此快捷键列表</translation>
    </message>
    <message>
        <source>New project</source>
        <translation>新建项目</translation>
    </message>
    <message>
        <source>Open a project</source>
        <translation>打开项目</translation>
    </message>
    <message>
        <source>New conversation (Chat, Agent or Workflow)</source>
        <translation>新建会话（聊天、智能体或工作流）</translation>
    </message>
    <message>
        <source>Exit the project</source>
        <translation>退出项目</translation>
    </message>
    <message>
        <source>Export the conversation</source>
        <translation>导出会话</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>Quit</source>
        <translation>退出</translation>
    </message>
    <message>
        <source>Search conversations (in the Logs panel: clear the log)</source>
        <translation>搜索会话（在日志面板中：清空日志）</translation>
    </message>
    <message>
        <source>Show or hide the run&apos;s Logs panel</source>
        <translation>显示或隐藏运行的日志面板</translation>
    </message>
    <message>
        <source>Show or hide the sidebar</source>
        <translation>显示或隐藏侧边栏</translation>
    </message>
    <message>
        <source>Composer: send the message</source>
        <translation>输入框：发送消息</translation>
    </message>
    <message>
        <source>Composer: new line</source>
        <translation>输入框：换行</translation>
    </message>
    <message>
        <source>Empty composer: recall your last message to edit it</source>
        <translation>输入框为空时：调出你的上一条消息以便编辑</translation>
    </message>
    <message>
        <source>Composer: attach images (or paste or drop them)</source>
        <translation>输入框：附加图片（也可粘贴或拖入）</translation>
    </message>
    <message>
        <source>Stop the running answer; close a menu or dialog</source>
        <translation>停止正在生成的回答；关闭菜单或对话框</translation>
    </message>
    <message>
        <source>Works list: rename the conversation</source>
        <translation>会话列表：重命名会话</translation>
    </message>
    <message>
        <source>Works list: type in the selected conversation (the arrow keys only browse)</source>
        <translation>工作列表：在所选对话中输入（方向键只用于浏览）</translation>
    </message>
    <message>
        <source>Works list, recent projects: delete or forget the selected item</source>
        <translation>会话列表、最近的项目：删除或移除所选项</translation>
    </message>
    <message>
        <source>Full output viewer: find</source>
        <translation>完整输出查看器：查找</translation>
    </message>
    <message>
        <source>Full output viewer: next match</source>
        <translation>完整输出查看器：下一个匹配</translation>
    </message>
    <message>
        <source>Full output viewer: previous match</source>
        <translation>完整输出查看器：上一个匹配</translation>
    </message>
    <message>
        <source>Settings: apply the changes</source>
        <translation>设置：应用更改</translation>
    </message>
    <message>
        <source>Settings, Packages: copy the selected problem</source>
        <translation>设置 &gt; 工作流包：复制所选问题</translation>
    </message>
    <message>
        <source>Conversation: copy the text selected in a message</source>
        <translation>会话：复制在消息中选中的文字</translation>
    </message>
    <message>
        <source>Keyboard shortcuts</source>
        <translation>键盘快捷键</translation>
    </message>
    <message>
        <source>Shortcut</source>
        <translation>快捷键</translation>
    </message>
    <message>
        <source>Action</source>
        <translation>操作</translation>
    </message>
</context>
<context>
    <name>SidebarToggle</name>
    <message>
        <source>&amp;View</source>
        <extracomment>Hide or show the sidebar, from anywhere in the main window.</extracomment>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>Show &amp;Sidebar</source>
        <translation>显示侧边栏(&amp;S)</translation>
    </message>
</context>
<context>
    <name>StartPage</name>
    <message>
        <source>A workbench for LLM agents. Pick a project folder to begin.</source>
        <extracomment>``(folder, name)``: create a project there (an existing project is opened). An empty name means &quot;use the folder&apos;s name&quot;. ``folder``: open the existing project in that folder. ``project_id``: remove that project from the recent list (its files are kept). The recent list should be read again (the page is being shown). The user wants the Settings dialog (the provider line&apos;s link). The folder the user last picked with Open Project (offered to become a project).</extracomment>
        <translation>大模型智能体工作台。选择一个项目文件夹开始。</translation>
    </message>
    <message>
        <source>New Project…</source>
        <translation>新建项目…</translation>
    </message>
    <message>
        <source>Create a project folder (Ctrl+N)</source>
        <translation>创建项目文件夹 (Ctrl+N)</translation>
    </message>
    <message>
        <source>Open Project…</source>
        <translation>打开项目…</translation>
    </message>
    <message>
        <source>Open an existing project folder (Ctrl+O)</source>
        <translation>打开已有的项目文件夹 (Ctrl+O)</translation>
    </message>
    <message>
        <source>Version {version}</source>
        <translation>版本 {version}</translation>
    </message>
    <message>
        <source>Settings…</source>
        <translation>设置…</translation>
    </message>
    <message>
        <source>Recent Projects</source>
        <translation>最近的项目</translation>
    </message>
    <message>
        <source>No recent projects yet.
Create a project or open an existing one to see it here.</source>
        <translation>还没有最近的项目。
新建或打开一个项目后会显示在这里。</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>打开</translation>
    </message>
    <message>
        <source>Remove from List</source>
        <translation>从列表中移除</translation>
    </message>
    <message>
        <source>Forget this project; its folder is not touched (Del)</source>
        <translation>从列表中移除此项目；不会改动其文件夹 (Del)</translation>
    </message>
    <message>
        <source>Found running on this computer: {servers}. Choose it in Settings to use it.</source>
        <translation>在本机发现正在运行的服务：{servers}。在设置中选择即可使用。</translation>
    </message>
    <message>
        <source>Model provider: {provider}</source>
        <translation>模型提供方：{provider}</translation>
    </message>
    <message>
        <source>This folder is missing; it cannot be opened.</source>
        <translation>此文件夹已丢失，无法打开。</translation>
    </message>
</context>
<context>
    <name>SubagentPage</name>
    <message>
        <source>Stop subagent</source>
        <extracomment>Characters of the description a tab&apos;s title shows (the tooltip has all of it). ``(project_id, conversation_id, session_id)``: open a subagent this one started. ``(session_id)``: stop this subagent (it runs, e.g. in the background).</extracomment>
        <translation>停止子智能体</translation>
    </message>
    <message>
        <source>Cancel this subagent; its log ends with a cancelled marker</source>
        <translation>取消此子智能体；其日志将以“已取消”标记结尾</translation>
    </message>
    <message>
        <source>Subagent</source>
        <translation>子智能体</translation>
    </message>
    <message>
        <source>This subagent&apos;s conversation cannot be read: {error}</source>
        <translation>无法读取此子智能体的会话：{error}</translation>
    </message>
    <message>
        <source>Loading…</source>
        <translation>正在加载…</translation>
    </message>
    <message>
        <source>Subagent {type}: {description}</source>
        <translation>子智能体 {type}：{description}</translation>
    </message>
    <message>
        <source>Read-only: the subagent&apos;s own conversation, linked to the Task call of its parent.</source>
        <translation>只读：这是子智能体自己的会话，与其父会话中的 Task 调用相互链接。</translation>
    </message>
    <message>
        <source>It runs in the background.</source>
        <translation>它在后台运行。</translation>
    </message>
    <message>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>completed</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
</context>
<context>
    <name>TimelineDelegate</name>
    <message>
        <source>waiting</source>
        <extracomment>Characters of a subagent&apos;s summary shown in its Task part (the whole answer is in its tab). Labels are translated as rows are painted (a language switch only repaints); lupdate finds ``translate(&quot;TimelineDelegate&quot;, &quot;...&quot;)`` calls by this name.</extracomment>
        <translation>等待中</translation>
    </message>
    <message>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>ok</source>
        <translation>成功</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>interrupted</source>
        <translation>已中断</translation>
    </message>
    <message>
        <source>{tokens} in</source>
        <translation>输入 {tokens}</translation>
    </message>
    <message>
        <source>({tokens} cached)</source>
        <translation>（缓存 {tokens}）</translation>
    </message>
    <message>
        <source>{tokens} out</source>
        <translation>输出 {tokens}</translation>
    </message>
    <message>
        <source>completed</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>Assistant</source>
        <extracomment>The ``error`` block of an error part; None when the message is not one. Retry and Continue are offered (the last message failed or was stopped, and nothing runs). The hover actions (rows/actions.py): Copy when there is text, Regenerate on the last answer. The model call&apos;s tokens (and cost), shown at the end of the header; &quot;&quot; when not reported. The answer and where it goes. &quot;● ● ●&quot; while a stream has nothing to show yet.</extracomment>
        <translation>助手</translation>
    </message>
    <message>
        <source>streaming…</source>
        <translation>生成中…</translation>
    </message>
    <message>
        <source>Interrupted</source>
        <translation>已中断</translation>
    </message>
    <message>
        <source>Synthetic</source>
        <translation>系统补全</translation>
    </message>
    <message>
        <source>Retry</source>
        <translation>重试</translation>
    </message>
    <message>
        <source>Continue</source>
        <translation>继续</translation>
    </message>
    <message>
        <source>Thinking…</source>
        <extracomment>Seconds spent thinking (None: not known). Still thinking: the message is streaming and has no answer text yet. The thoughts (expanded only) and the bar beside them.</extracomment>
        <translation>思考中…</translation>
    </message>
    <message>
        <source>Thought for {n} s</source>
        <translation>思考了 {n} 秒</translation>
    </message>
    <message>
        <source>Thoughts</source>
        <translation>思考过程</translation>
    </message>
    <message>
        <source>The model call failed</source>
        <extracomment>``(text, y)`` of the partial answer (drawn in the text colour) and of the error message.</extracomment>
        <translation>模型调用失败</translation>
    </message>
    <message>
        <source>The turn ended with an error</source>
        <translation>本回合因错误而结束</translation>
    </message>
    <message>
        <source>{path}: not in the state folder, not shown</source>
        <extracomment>Characters of a tool result shown expanded (the rest: &quot;… more&quot;, and &quot;Open full output&quot; opens the viewer). A Task part&apos;s subagent type and description (from its subagent, else from its arguments). Read only when the part is expanded (a tool&apos;s arguments may be megabytes). A running command&apos;s output so far (expanded parts only; &quot;&quot; once the result is in). Bytes of an offloaded result (None: the result is stored whole). Expanded only: the line under the header, the Arguments and Result sections, the row with &quot;Open full output&quot; (an offloaded result, or one cut at MAX_RESULT_CHARS).</extracomment>
        <translation>{path}：不在状态文件夹中，不予显示</translation>
    </message>
    <message>
        <source>{path}: the image file is missing</source>
        <translation>{path}：图片文件不存在</translation>
    </message>
    <message>
        <source>{path}: too large to preview; click to open it</source>
        <translation>{path}：太大，无法预览；点击打开</translation>
    </message>
    <message>
        <source>{path}: the image cannot be decoded</source>
        <translation>{path}：无法解码该图片</translation>
    </message>
    <message>
        <source>Loading image…</source>
        <translation>正在加载图片…</translation>
    </message>
    <message>
        <source>Arguments</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>Error</source>
        <translation>错误</translation>
    </message>
    <message>
        <source>… {n} more characters</source>
        <translation>… 还有 {n} 个字符</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>结果</translation>
    </message>
    <message>
        <source>Output</source>
        <translation>输出</translation>
    </message>
    <message>
        <source>Subagent</source>
        <translation>子智能体</translation>
    </message>
    <message>
        <source>Open full output</source>
        <translation>打开完整输出</translation>
    </message>
    <message>
        <source>The result was {size}; above is its beginning.</source>
        <translation>结果大小为 {size}；上面是它的开头部分。</translation>
    </message>
    <message>
        <source>Working in the background…</source>
        <extracomment>&quot;Working…&quot; while the subagent runs (or before it is known).</extracomment>
        <translation>正在后台工作…</translation>
    </message>
    <message>
        <source>Working…</source>
        <translation>正在工作…</translation>
    </message>
    <message>
        <source>Open subagent conversation</source>
        <translation>打开子智能体会话</translation>
    </message>
    <message>
        <source>Background subagent {type} {status}</source>
        <extracomment>The title line (status dot, title, description), the summary line and the button&apos;s place.</extracomment>
        <translation>后台子智能体 {type} {status}</translation>
    </message>
    <message>
        <source>A question</source>
        <extracomment>The height of the open form; None when the question is not waiting for an answer here. The answer (or why there is none), one line each, when no form is open.</extracomment>
        <translation>一个问题</translation>
    </message>
    <message>
        <source>Not answered: the turn was stopped.</source>
        <translation>未回答：本回合已停止。</translation>
    </message>
    <message>
        <source>Not answered.</source>
        <translation>未回答。</translation>
    </message>
    <message>
        <source>Waiting for your answer…</source>
        <translation>等待你的回答…</translation>
    </message>
    <message>
        <source>Summary of the earlier conversation</source>
        <extracomment>The summary and where it goes (expanded only).</extracomment>
        <translation>之前会话的摘要</translation>
    </message>
    <message>
        <source>Copy</source>
        <extracomment>Pixels between two links, and around them on a backdrop.</extracomment>
        <translation>复制</translation>
    </message>
    <message>
        <source>Edit</source>
        <translation>编辑</translation>
    </message>
    <message>
        <source>Regenerate</source>
        <translation>重新生成</translation>
    </message>
</context>
<context>
    <name>TimelineView</name>
    <message>
        <source>Code copied to the clipboard.</source>
        <extracomment>Pixels from the bottom that still count as &quot;at the bottom&quot; (following new rows). Older rows shown at a time when the user scrolls to the first row shown (TimelineModel.show_older). Back at the end with more rows than this shown, the view keeps only the newest OPEN_ROWS (each new message lays out every row shown again; see TimelineModel.OPEN_ROWS). The most rows shown at once: on the way up (or down) the window slides rather than grows, so showing another batch lays out at most this many rows (~10 ms). ``(action, key, message_id)``: Retry/Continue on an error part, &quot;open_output&quot; of a tool part, &quot;edit_message&quot; or &quot;regenerate&quot; (a message&apos;s hover actions; Copy is done here); for &quot;open_subagent&quot; (a Task part or a subagent notice) ``message_id`` is the subagent&apos;s session id. ``(request_id, call_id, payload)``: an ask-user widget was answered (None: dismissed). ``(text)``: something worth a line in the status bar (&quot;Copied&quot;). ``(text)``: typed while the timeline had the keyboard (after selecting text; &quot;&quot; for Esc).</extracomment>
        <translation>代码已复制到剪贴板。</translation>
    </message>
    <message>
        <source>Copied to the clipboard.</source>
        <translation>已复制到剪贴板。</translation>
    </message>
</context>
<context>
    <name>ToolCallsModel</name>
    <message>
        <source>Time</source>
        <translation>时间</translation>
    </message>
    <message>
        <source>Tool</source>
        <translation>工具</translation>
    </message>
    <message>
        <source>Arguments</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>结果</translation>
    </message>
    <message>
        <source>Duration</source>
        <translation>耗时</translation>
    </message>
    <message>
        <source>ok</source>
        <translation>成功</translation>
    </message>
    <message>
        <source>error</source>
        <translation>错误</translation>
    </message>
</context>
<context>
    <name>ToolsPage</name>
    <message>
        <source>Tools</source>
        <translation>工具</translation>
    </message>
    <message>
        <source>What the model may do in your project. Tools can only read and write inside the project and its state folder.</source>
        <translation>模型可以在你的项目中做什么。工具只能在项目及其状态文件夹内读写。</translation>
    </message>
    <message>
        <source>Files</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>Let the model read and write project files</source>
        <translation>允许模型读写项目文件</translation>
    </message>
    <message>
        <source>File tools</source>
        <translation>文件工具</translation>
    </message>
    <message>
        <source>Largest read</source>
        <translation>最大读取量</translation>
    </message>
    <message>
        <source>Largest write</source>
        <translation>最大写入量</translation>
    </message>
    <message>
        <source> bytes</source>
        <translation> 字节</translation>
    </message>
    <message>
        <source>Running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>Tool timeout</source>
        <translation>工具超时</translation>
    </message>
    <message>
        <source> s</source>
        <translation> 秒</translation>
    </message>
    <message>
        <source>Approvals</source>
        <translation>批准</translation>
    </message>
    <message>
        <source>Always allowed</source>
        <translation>始终允许</translation>
    </message>
    <message>
        <source>Tools you chose “Always allow” for run without asking. Remove one to be asked again.</source>
        <translation>你选择了“始终允许”的工具会直接运行。移除后会重新询问。</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <source>No tool is always allowed.</source>
        <translation>没有始终允许的工具。</translation>
    </message>
</context>
<context>
    <name>WorkflowPanel</name>
    <message>
        <source>Idle</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>Running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>Waiting for you</source>
        <translation>等待你的输入</translation>
    </message>
    <message>
        <source>Completed</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>Workflow:</source>
        <extracomment>The package&apos;s name and version (&quot;project-brief 1.0.0&quot;). ``(package_id, workflow_id)``: start a run of that workflow in this conversation. ``(run_id)``: make that run the active one and continue it. The workflow to pick when the list is (re)filled: the conversation&apos;s own, or the user&apos;s pick.</extracomment>
        <translation>工作流：</translation>
    </message>
    <message>
        <source>No workflows installed</source>
        <translation>未安装工作流</translation>
    </message>
    <message>
        <source>Start Workflow</source>
        <translation>开始工作流</translation>
    </message>
    <message>
        <source>Start a new run of this workflow in this conversation</source>
        <translation>在此会话中开始此工作流的新运行</translation>
    </message>
    <message>
        <source>Runs:</source>
        <translation>运行：</translation>
    </message>
    <message>
        <source>No runs yet</source>
        <translation>尚无运行</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>继续运行</translation>
    </message>
    <message>
        <source>Continue this run where it stopped</source>
        <translation>从停止处继续此运行</translation>
    </message>
    <message>
        <source>No run started in this conversation yet</source>
        <translation>此会话尚未开始任何运行</translation>
    </message>
    <message>
        <source>1 run started in this conversation</source>
        <translation>此会话已开始 1 次运行</translation>
    </message>
    <message>
        <source>{count} runs started in this conversation</source>
        <translation>此会话已开始 {count} 次运行</translation>
    </message>
    <message>
        <source>No installed package provides workflows yet; import one in Settings.</source>
        <translation>尚无已安装的工作流包提供工作流；请在设置中导入一个。</translation>
    </message>
</context>
<context>
    <name>WorksPanel</name>
    <message>
        <source>A plain conversation with the model</source>
        <extracomment>The types &quot;New Conversation&quot; offers, in menu order (``run`` is shown as Workflow). Typing pauses this long before the message text is searched. Role of the proxy: the snippet of the first message that matched the search (&quot;&quot; when none).</extracomment>
        <translation>与模型直接聊天</translation>
    </message>
    <message>
        <source>Talk to a persona with a menu, such as the code reviewer</source>
        <translation>与带菜单的智能体角色交谈，例如代码审查员</translation>
    </message>
    <message>
        <source>Run a workflow from a package, step by step</source>
        <translation>逐步运行工作流包中的工作流</translation>
    </message>
    <message>
        <source>+ New</source>
        <extracomment>``(conversation_id, title)``: the user finished renaming a row. The user tried to give a conversation an empty name. ``entry_type`` (chat, agent, run): create a conversation of that type. ``(conversation_id, title)``: rename that conversation (the title is not empty). ``conversation_id``: delete that conversation (the user has confirmed). ``query``: search the message text (debounced; &quot;&quot; clears the search). ``conversation_id``: the selected conversation changed (&quot;&quot; when none); see :attr:`browsing`. Enter on the open conversation&apos;s row: the user wants to type in it. ``(conversation_id, message_id, query)``: the user picked a conversation that the search found in its messages: show it at that message with the query marked. The search was cleared (no message should stay marked). ``message``: something the user should read (e.g. an empty name was refused). The empty list&apos;s &quot;Try a workflow&quot;: a Workflow conversation with the built-in example picked.</extracomment>
        <translation>+ 新建</translation>
    </message>
    <message>
        <source>New conversation: Chat, Agent or Workflow (Ctrl+Shift+N)</source>
        <translation>新建会话：聊天、智能体或工作流 (Ctrl+Shift+N)</translation>
    </message>
    <message>
        <source>Search titles and messages</source>
        <translation>搜索标题和消息</translation>
    </message>
    <message>
        <source>Try a workflow</source>
        <translation>试用工作流</translation>
    </message>
    <message>
        <source>Start a Workflow conversation with the built-in Project brief example</source>
        <translation>用内置的“项目简介”示例开始一个工作流会话</translation>
    </message>
    <message>
        <source>Delete conversation</source>
        <translation>删除会话</translation>
    </message>
    <message>
        <source>Delete “{title}”?</source>
        <translation>删除“{title}”？</translation>
    </message>
    <message>
        <source>Its messages, tool outputs and subagent logs are removed from disk. This cannot be undone.</source>
        <translation>它的消息、工具输出和子智能体日志将从磁盘删除。此操作无法撤销。</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>A conversation needs a name; the old one was kept.</source>
        <translation>会话需要一个名称；已保留原名称。</translation>
    </message>
    <message>
        <source>Searching messages…</source>
        <translation>正在搜索消息…</translation>
    </message>
    <message>
        <source>Found in the messages of {count} conversation(s)</source>
        <translation>在 {count} 个会话的消息中找到</translation>
    </message>
    <message>
        <source>No message contains this text</source>
        <translation>没有消息包含此文本</translation>
    </message>
    <message>
        <source>Rename</source>
        <translation>重命名</translation>
    </message>
    <message>
        <source>Delete…</source>
        <translation>删除…</translation>
    </message>
    <message>
        <source>Loading conversations…</source>
        <translation>正在加载会话…</translation>
    </message>
    <message>
        <source>No conversation matches “{query}”.</source>
        <translation>没有与“{query}”匹配的会话。</translation>
    </message>
    <message>
        <source>No conversations yet.
Start one with “+ New”.</source>
        <translation>还没有会话。
点击“+ 新建”开始。</translation>
    </message>
</context>
<context>
    <name>_Chip</name>
    <message>
        <source>pasted image</source>
        <extracomment>File name endings taken as images when dropped or pasted as files (the bytes are checked anyway). The most images one message takes. When it was given: chips keep that order, whichever image was read first.</extracomment>
        <translation>粘贴的图片</translation>
    </message>
    <message>
        <source>Remove {name}</source>
        <translation>移除 {name}</translation>
    </message>
    <message>
        <source>Remove image {name}</source>
        <translation>移除图片 {name}</translation>
    </message>
</context>
<context>
    <name>core</name>
    <message>
        <source>The app stopped while the answer was streaming.</source>
        <translation>应用在回答生成过程中停止了。</translation>
    </message>
    <message>
        <source>The app stopped while this answer was streaming; the text above is what had arrived.</source>
        <translation>应用在此回答生成过程中停止了；上面是已经收到的文本。</translation>
    </message>
    <message>
        <source>Stopped by the user while the answer was streaming.</source>
        <translation>用户在回答生成过程中停止了它。</translation>
    </message>
    <message>
        <source>The app stopped while this subagent was running; its work ends here.</source>
        <translation>应用在此子智能体运行时停止了；它的工作到此结束。</translation>
    </message>
    <message>
        <source>The same failing call ({tool} with the same arguments) was made {count} times in a row; the turn was stopped to avoid a loop.</source>
        <translation>同一个失败的调用（{tool}，参数相同）已连续进行 {count} 次；为避免死循环，本回合已停止。</translation>
    </message>
    <message>
        <source>The turn reached the limit of {limit} model calls (engine.maxTurns) and was stopped.</source>
        <translation>本回合已达到 {limit} 次模型调用的上限（engine.maxTurns），已停止。</translation>
    </message>
    <message>
        <source>The current turn does not fit the context budget even with every tool result and large tool argument shortened to a note: the system prompt and the current turn need {chars} characters / {tokens} tokens (before shortening {turn_chars} / {turn_tokens}), over the budget of {budget}. Raise the model&apos;s context window (Settings &gt; Model &gt; Context window) or start a new conversation, then press Continue.</source>
        <translation>即使把每个工具结果和较大的工具参数都缩短为一条说明，当前回合仍然放不进上下文预算：系统提示词和当前回合需要 {chars} 个字符 / {tokens} 个 token（缩短前为 {turn_chars} / {turn_tokens}），超过了预算 {budget}。请调大模型的上下文窗口（设置 &gt; 模型 &gt; 上下文窗口）或新建一个会话，然后点击“继续”。</translation>
    </message>
    <message>
        <source>The current turn is too large to send whole, and its full tool outputs could not be saved for the model to read ({detail}). Free some disk space, then press Continue.</source>
        <translation>当前回合太大，无法完整发送，而且其完整的工具输出也无法保存供模型读取（{detail}）。请释放一些磁盘空间，然后点击“继续”。</translation>
    </message>
    <message>
        <source>The provider did not answer in time.</source>
        <translation>模型提供方未及时响应。</translation>
    </message>
    <message>
        <source>The connection ended before the model finished its answer.</source>
        <translation>模型还未完成回答，连接就已断开。</translation>
    </message>
    <message>
        <source>Network error talking to {where}.</source>
        <translation>与{where}通信时出现网络错误。</translation>
    </message>
    <message>
        <source>Network error talking to {where} ({detail}).</source>
        <translation>与 {where} 通信时出现网络错误（{detail}）。</translation>
    </message>
    <message>
        <source>the provider</source>
        <translation>模型提供方</translation>
    </message>
    <message>
        <source>The API key was rejected (HTTP {status}): {detail}</source>
        <translation>API 密钥被拒绝（HTTP {status}）：{detail}</translation>
    </message>
    <message>
        <source>Access denied (HTTP {status}): {detail}</source>
        <translation>访问被拒绝（HTTP {status}）：{detail}</translation>
    </message>
    <message>
        <source>Rate limited (HTTP 429): {detail}</source>
        <translation>请求过于频繁，已被限流（HTTP 429）：{detail}</translation>
    </message>
    <message>
        <source>The provider timed out (HTTP 408): {detail}</source>
        <translation>模型提供方超时（HTTP 408）：{detail}</translation>
    </message>
    <message>
        <source>The provider&apos;s response has an unexpected shape: {detail}</source>
        <translation>模型提供方的响应格式不符合预期：{detail}</translation>
    </message>
    <message>
        <source>The provider sent malformed JSON: {detail} (at char {pos}).</source>
        <translation>模型提供方发送了格式错误的 JSON：{detail}（第 {pos} 个字符处）。</translation>
    </message>
    <message>
        <source>The provider sent a malformed chunk: {detail}.</source>
        <translation>模型提供方发送了格式错误的数据块：{detail}。</translation>
    </message>
    <message>
        <source>The provider reported an error: {detail}</source>
        <translation>模型提供方报告了错误：{detail}</translation>
    </message>
    <message>
        <source>The provider&apos;s response is not a JSON object.</source>
        <translation>模型提供方的响应不是 JSON 对象。</translation>
    </message>
    <message>
        <source>The provider&apos;s response holds no message.</source>
        <translation>模型提供方的响应中没有消息。</translation>
    </message>
    <message>
        <source>The provider&apos;s answer ended without a final message.</source>
        <translation>模型提供方的回答结束了，但没有给出最终消息。</translation>
    </message>
    <message>
        <source>{name}={value!r} is not a number of seconds from 0 to 10; unset it to pace the demo as usual.</source>
        <translation>{name}={value!r} 不是 0 到 10 之间的秒数；取消设置该变量，演示即按平常的节奏输出。</translation>
    </message>
    <message>
        <source>Write {path}</source>
        <translation>写入 {path}</translation>
    </message>
    <message>
        <source>Write {path} ({size} bytes)</source>
        <translation>写入 {path}（{size} 字节）</translation>
    </message>
    <message>
        <source>Patch {path} ({form})</source>
        <translation>修改 {path}（{form}）</translation>
    </message>
    <message>
        <source>task ({type}): {description}</source>
        <translation>子任务（{type}）：{description}</translation>
    </message>
    <message>
        <source>The user refused this tool call. Do not retry it; ask the user what to do instead.</source>
        <translation>用户拒绝了此次工具调用。</translation>
    </message>
    <message>
        <source>The user closed the question without answering.</source>
        <translation>用户关闭了问题，没有回答。</translation>
    </message>
    <message>
        <source>The call was interrupted by the user.</source>
        <translation>调用被用户中断。</translation>
    </message>
    <message>
        <source>The tool call {name} ({call_id}) was interrupted before it returned a result (the app stopped or the call was cancelled). It may not have completed; check its effects and run it again if it is still needed.</source>
        <translation>工具调用 {name}（{call_id}）在返回结果前被中断（应用已停止或调用被取消）。它可能没有完成；请检查其效果，如仍需要请重新运行。</translation>
    </message>
    <message>
        <source>No tool named {name!r} is available. Tools: {available}.</source>
        <translation>没有名为 {name!r} 的可用工具。可用工具：{available}。</translation>
    </message>
    <message>
        <source>Arguments of {name} {problem}.</source>
        <translation>{name} 的参数{problem}。</translation>
    </message>
    <message>
        <source>Invalid arguments for {name}: {problem}</source>
        <translation>{name} 的参数无效：{problem}</translation>
    </message>
    <message>
        <source>{name} did not finish within {timeout:g} s and was stopped.</source>
        <translation>{name} 未在 {timeout:g} 秒内完成，已被停止。</translation>
    </message>
    <message>
        <source>{name} failed: {kind}: {detail}</source>
        <translation>{name} 失败：{kind}：{detail}</translation>
    </message>
    <message>
        <source>{name} returned an invalid result.</source>
        <translation>{name} 返回了无效的结果。</translation>
    </message>
    <message>
        <source>{path} does not exist.</source>
        <translation>{path} 不存在。</translation>
    </message>
    <message>
        <source>{path} is a folder; use fs.list to see what it holds.</source>
        <translation>{path} 是文件夹；请用 fs.list 查看其内容。</translation>
    </message>
    <message>
        <source>{path} is a folder.</source>
        <translation>{path} 是文件夹。</translation>
    </message>
    <message>
        <source>{path} is a file; use fs.read to read it.</source>
        <translation>{path} 是文件；请用 fs.read 读取。</translation>
    </message>
    <message>
        <source>{path} is not a regular file.</source>
        <translation>{path} 不是普通文件。</translation>
    </message>
    <message>
        <source>{path} is a binary file.</source>
        <translation>{path} 是二进制文件。</translation>
    </message>
    <message>
        <source>{path} is not UTF-8 text.</source>
        <translation>{path} 不是 UTF-8 文本。</translation>
    </message>
    <message>
        <source>{path} cannot be read: {reason}.</source>
        <translation>无法读取 {path}：{reason}。</translation>
    </message>
    <message>
        <source>{path} is outside the folders tools may use.</source>
        <translation>{path} 不在工具可以使用的文件夹内。</translation>
    </message>
    <message>
        <source>{path} is in @pkg, which is read-only.</source>
        <translation>{path} 位于只读的 @pkg 中。</translation>
    </message>
    <message>
        <source>{path} is the project file; the app manages it, tools may only read it.</source>
        <translation>{path} 是项目文件，由应用管理，工具只能读取它。</translation>
    </message>
    <message>
        <source>{path} is a log kept by the app (read-only for tools).</source>
        <translation>{path} 是应用保存的日志（对工具只读）。</translation>
    </message>
    <message>
        <source>{path!r} is absolute; use @project/, @state/ or @pkg/ (or a path relative to the project).</source>
        <translation>{path!r} 是绝对路径；请使用 @project/、@state/ 或 @pkg/（或相对于项目的路径）。</translation>
    </message>
    <message>
        <source>{path!r}: &apos;..&apos; is not allowed in paths.</source>
        <translation>{path!r}：路径中不允许出现“..”。</translation>
    </message>
    <message>
        <source>{path!r} resolves outside @{alias} (through a symbolic link).</source>
        <translation>{path!r} 通过符号链接指向了 @{alias} 之外。</translation>
    </message>
    <message>
        <source>Subagents are not available in this session.</source>
        <translation>此会话中无法使用子智能体。</translation>
    </message>
    <message>
        <source>Unknown subagent_type {type!r}. Types: {types}.</source>
        <translation>未知的 subagent_type {type!r}。可用类型：{types}。</translation>
    </message>
    <message>
        <source>The app is shutting down; no new subagent can start.</source>
        <translation>应用正在关闭，无法启动新的子智能体。</translation>
    </message>
    <message>
        <source>The subagent could not be started: {detail}</source>
        <translation>无法启动子智能体：{detail}</translation>
    </message>
    <message>
        <source>The subagent was cancelled before it finished ({reason}).</source>
        <translation>子智能体在完成前被取消（{reason}）。</translation>
    </message>
    <message>
        <source>The subagent failed.</source>
        <translation>子智能体运行失败。</translation>
    </message>
    <message>
        <source>it was cancelled</source>
        <translation>它被取消了</translation>
    </message>
    <message>
        <source>its parent was stopped</source>
        <translation>它的父会话已停止</translation>
    </message>
    <message>
        <source>the app shut down</source>
        <translation>应用已关闭</translation>
    </message>
    <message>
        <source>the user stopped it</source>
        <translation>用户停止了它</translation>
    </message>
    <message>
        <source>The content is {size} bytes; the limit is {limit} bytes. Write smaller files.</source>
        <translation>内容为 {size} 字节，上限为 {limit} 字节。请写入更小的文件。</translation>
    </message>
    <message>
        <source>The state&apos;s frontmatter is not valid YAML; nothing was written.</source>
        <translation>运行状态的 frontmatter 不是有效的 YAML；未写入任何内容。</translation>
    </message>
    <message>
        <source>{folder} is not a CrewAgent project (it has no .crewagent.json).</source>
        <translation>{folder} 不是 CrewAgent 项目（其中没有 .crewagent.json）。</translation>
    </message>
    <message>
        <source>The folder {folder} does not exist.</source>
        <translation>文件夹 {folder} 不存在。</translation>
    </message>
    <message>
        <source>{folder} is a file, not a folder.</source>
        <translation>{folder} 是文件，不是文件夹。</translation>
    </message>
    <message>
        <source>The project path is empty; give the project folder.</source>
        <translation>项目路径为空；请指定项目文件夹。</translation>
    </message>
    <message>
        <source>No conversation with id {conversation_id!r} in this project.</source>
        <translation>此项目中没有 ID 为 {conversation_id!r} 的会话。</translation>
    </message>
    <message>
        <source>Could not write {path}: {reason}. Nothing already stored was lost.</source>
        <translation>无法写入 {path}：{reason}。已保存的内容没有丢失。</translation>
    </message>
    <message>
        <source>Cannot read {path}: {reason}.</source>
        <translation>无法读取 {path}：{reason}。</translation>
    </message>
    <message>
        <source>The exported chain would not be valid; nothing was written.</source>
        <translation>导出的消息链将是无效的；未写入任何内容。</translation>
    </message>
    <message>
        <source>Cannot write {path}: {reason}</source>
        <translation>无法写入 {path}：{reason}</translation>
    </message>
    <message>
        <source>the conversation holds no message a request would carry: the export is []</source>
        <translation>会话中没有任何会随请求发送的消息：导出结果为 []</translation>
    </message>
    <message>
        <source>the disk is full (or the file size limit was reached)</source>
        <translation>磁盘已满（或已达到文件大小上限）</translation>
    </message>
    <message>
        <source>permission denied</source>
        <translation>权限不足</translation>
    </message>
    <message>
        <source>it is a folder, not a file</source>
        <translation>它是文件夹，不是文件</translation>
    </message>
    <message>
        <source>a part of the path is a file, not a folder</source>
        <translation>路径中的某一部分是文件，不是文件夹</translation>
    </message>
    <message>
        <source>The full output of tool result {message_id} is missing ({path}); only its preview remains in the conversation.</source>
        <translation>工具结果 {message_id} 的完整输出已丢失（{path}）；会话中只保留了它的预览。</translation>
    </message>
    <message>
        <source>The full output of tool result {message_id} ({path}) does not match its checksum; the file was changed or damaged.</source>
        <translation>工具结果 {message_id} 的完整输出（{path}）与其校验和不符；文件已被修改或损坏。</translation>
    </message>
    <message>
        <source>This conversation has no workflow run; start one with Start Workflow in the Workflow header, `crewagent run --workflow ...` or an agent&apos;s workflow menu item.</source>
        <translation>此会话还没有工作流运行；请通过工作流标题栏中的“开始工作流”、`crewagent run --workflow ...` 或智能体菜单中的工作流条目开始一个。</translation>
    </message>
    <message>
        <source>The package {package} has no workflow {workflow!r} (menu of {agent}).</source>
        <translation>工作流包 {package} 中没有工作流 {workflow!r}（{agent} 的菜单）。</translation>
    </message>
    <message>
        <source>Run {run} needs the package {package}, which is no longer installed; import it again.</source>
        <translation>运行 {run} 需要工作流包 {package}，但它已不再安装；请重新导入。</translation>
    </message>
    <message>
        <source>The run {run} belongs to another conversation.</source>
        <translation>运行 {run} 属于另一个会话。</translation>
    </message>
    <message>
        <source>Run {run} is complete; there is nothing to resume.</source>
        <translation>运行 {run} 已完成，没有可继续的内容。</translation>
    </message>
    <message>
        <source>Run {run}: {detail}</source>
        <translation>运行 {run}：{detail}</translation>
    </message>
    <message>
        <source>The package {package} has no workflow {workflow!r}.</source>
        <translation>工作流包 {package} 中没有工作流 {workflow!r}。</translation>
    </message>
    <message>
        <source>No installed package with id {package!r}.</source>
        <translation>没有已安装的 ID 为 {package!r} 的工作流包。</translation>
    </message>
    <message>
        <source>a classic BMAD package (workflow.yaml) is not supported: format 1.1 needs bmad.json, workflow.graph.json, workflow.md and steps/*.md</source>
        <translation>不支持经典 BMAD 工作流包（workflow.yaml）：1.1 格式需要 bmad.json、workflow.graph.json、workflow.md 和 steps/*.md</translation>
    </message>
    <message>
        <source>is missing: a package has bmad.json at its root</source>
        <translation>缺失：工作流包的根目录中必须有 bmad.json</translation>
    </message>
    <message>
        <source>is not UTF-8 text (byte {byte})</source>
        <translation>不是 UTF-8 文本（第 {byte} 字节）</translation>
    </message>
    <message>
        <source>is not valid JSON: {detail}</source>
        <translation>不是有效的 JSON：{detail}</translation>
    </message>
    <message>
        <source>has no YAML frontmatter (a &apos;---&apos; block at the top)</source>
        <translation>没有 YAML frontmatter（文件开头的 “---” 块）</translation>
    </message>
    <message>
        <source>{value!r} is not a relative path inside the package</source>
        <translation>{value!r} 不是工作流包内的相对路径</translation>
    </message>
    <message>
        <source>the {what} {value!r} is not in the package</source>
        <translation>{what} {value!r} 不在工作流包中</translation>
    </message>
    <message>
        <source>agents file</source>
        <translation>智能体文件</translation>
    </message>
    <message>
        <source>workflow file</source>
        <translation>工作流文件</translation>
    </message>
    <message>
        <source>graph file</source>
        <translation>流程图文件</translation>
    </message>
    <message>
        <source>the step file {value!r} is not in the package</source>
        <translation>步骤文件 {value!r} 不在工作流包中</translation>
    </message>
    <message>
        <source>the agent id {value!r} is used twice</source>
        <translation>智能体 ID {value!r} 被使用了两次</translation>
    </message>
    <message>
        <source>the agent {value!r} is not in the package&apos;s agents</source>
        <translation>智能体 {value!r} 不在工作流包的智能体中</translation>
    </message>
    <message>
        <source>{value!r} is not a node of {graph}</source>
        <translation>{value!r} 不是 {graph} 中的节点</translation>
    </message>
    <message>
        <source>the node id {value!r} is used twice</source>
        <translation>节点 ID {value!r} 被使用了两次</translation>
    </message>
    <message>
        <source>the entry node {value!r} is not a node of the graph</source>
        <translation>入口节点 {value!r} 不是流程图中的节点</translation>
    </message>
    <message>
        <source>the edge&apos;s {end!r} node {value!r} is not a node of the graph</source>
        <translation>连线的 {end!r} 端节点 {value!r} 不是流程图中的节点</translation>
    </message>
    <message>
        <source>node {value!r} already has a default edge</source>
        <translation>节点 {value!r} 已经有一条默认连线</translation>
    </message>
    <message>
        <source>is {value!r} but the graph&apos;s node is {node!r}</source>
        <translation>是 {value!r}，但流程图中的节点是 {node!r}</translation>
    </message>
    <message>
        <source>is {value!r} but the graph says {type!r}</source>
        <translation>是 {value!r}，但流程图中写的是 {type!r}</translation>
    </message>
    <message>
        <source>this step file is not the file of any node of the package&apos;s graphs</source>
        <translation>此步骤文件不属于工作流包中任何流程图的节点</translation>
    </message>
    <message>
        <source>the workflow id {value!r} is used twice</source>
        <translation>工作流 ID {value!r} 被使用了两次</translation>
    </message>
    <message>
        <source>{value!r} is not a workflow of this package</source>
        <translation>{value!r} 不是此工作流包中的工作流</translation>
    </message>
    <message>
        <source>this app cannot use the agent: {detail}</source>
        <translation>本应用无法使用此智能体：{detail}</translation>
    </message>
    <message>
        <source>Connected to {url} ({count} models).</source>
        <translation>已连接到 {url}（{count} 个模型）。</translation>
    </message>
    <message>
        <source>Connected to {url} ({count} models). The model {model!r} is not in the provider&apos;s list.</source>
        <translation>已连接到 {url}（{count} 个模型）。模型 {model!r} 不在模型提供方的列表中。</translation>
    </message>
    <message>
        <source>The provider refused the API key: {detail}</source>
        <translation>模型提供方拒绝了 API 密钥：{detail}</translation>
    </message>
    <message>
        <source>{url} did not answer in time.</source>
        <translation>{url} 未及时响应。</translation>
    </message>
    <message>
        <source>{url} answered, but not like an OpenAI-compatible API.</source>
        <translation>{url} 有响应，但不像兼容 OpenAI 的接口。</translation>
    </message>
    <message>
        <source>{url}/models does not exist: check the base URL (it usually ends in /v1).</source>
        <translation>{url}/models 不存在：请检查基础 URL（通常以 /v1 结尾）。</translation>
    </message>
    <message>
        <source>Could not reach {url}: {detail}</source>
        <translation>无法连接到 {url}：{detail}</translation>
    </message>
    <message>
        <source>{url}/models did not return a model list.</source>
        <translation>{url}/models 没有返回模型列表。</translation>
    </message>
    <message>
        <source>The {provider} provider needs a base URL (settings, or OPENAI_BASE_URL), e.g. {example}.</source>
        <translation>{provider} 模型提供方需要基础 URL（在设置中填写，或设置 OPENAI_BASE_URL），例如 {example}。</translation>
    </message>
    <message>
        <source>The {provider} provider needs a base URL (Settings), e.g. {example}.</source>
        <translation>{provider} 模型提供方需要基础 URL（在设置中填写），例如 {example}。</translation>
    </message>
    <message>
        <source>The {provider} provider needs a model name (settings, or CREWAGENT_MODEL).</source>
        <translation>{provider} 模型提供方需要模型名称（在设置中填写，或设置 CREWAGENT_MODEL）。</translation>
    </message>
    <message>
        <source>The {provider} provider needs an API key (save it in Settings, or set {variable}).</source>
        <translation>{provider} 模型提供方需要 API 密钥（在设置中保存，或设置 {variable}）。</translation>
    </message>
    <message>
        <source>The {provider} provider needs an API key (save it in Settings).</source>
        <translation>{provider} 模型提供方需要 API 密钥（在设置中保存）。</translation>
    </message>
    <message>
        <source>The base URL must start with http:// or https://.</source>
        <translation>基础 URL 必须以 http:// 或 https:// 开头。</translation>
    </message>
    <message>
        <source>The {provider} provider needs a base URL, e.g. {example}.</source>
        <translation>{provider} 模型提供方需要基础 URL，例如 {example}。</translation>
    </message>
    <message>
        <source>Choose or type the model to use.</source>
        <translation>请选择或输入要使用的模型。</translation>
    </message>
    <message>
        <source>The {provider} provider takes no API key.</source>
        <translation>{provider} 模型提供方不需要 API 密钥。</translation>
    </message>
    <message>
        <source>The demo provider runs inside CrewAgent; there is nothing to connect to.</source>
        <translation>演示模型在 CrewAgent 内部运行，无需连接。</translation>
    </message>
    <message>
        <source>{url} did not answer within {seconds:.0f} s.</source>
        <translation>{url} 未在 {seconds:.0f} 秒内响应。</translation>
    </message>
    <message>
        <source>There is no answer to regenerate in this conversation.</source>
        <translation>此会话中没有可以重新生成的回答。</translation>
    </message>
    <message>
        <source>That message can no longer be edited: it is not one of yours on the conversation as it is now.</source>
        <translation>该消息已无法编辑：在会话的当前分支中，它不是你发送的消息。</translation>
    </message>
    <message>
        <source>An edited message cannot be empty.</source>
        <translation>编辑后的消息不能为空。</translation>
    </message>
    <message>
        <source>the pasted image</source>
        <translation>粘贴的图片</translation>
    </message>
    <message>
        <source>{name} is {size}; images up to {limit} can be attached.</source>
        <translation>{name} 大小为 {size}；只能附加不超过 {limit} 的图片。</translation>
    </message>
    <message>
        <source>{name} is not a PNG, JPEG, WebP or GIF image.</source>
        <translation>{name} 不是 PNG、JPEG、WebP 或 GIF 图片。</translation>
    </message>
    <message>
        <source>{name} cannot be read: {reason}</source>
        <translation>无法读取 {name}：{reason}</translation>
    </message>
    <message>
        <source>Refused image reference {reference}: not a stored attachment.</source>
        <translation>已拒绝图片引用 {reference}：它不是已保存的附件。</translation>
    </message>
    <message>
        <source>The attached image {reference} is missing.</source>
        <translation>附加的图片 {reference} 已丢失。</translation>
    </message>
    <message>
        <source>The attached image {reference} was changed after it was attached.</source>
        <translation>附加的图片 {reference} 在附加后被修改过。</translation>
    </message>
    <message>
        <source>an image data URL is not valid base64 ({reason}).</source>
        <translation>图片的 data URL 不是有效的 base64（{reason}）。</translation>
    </message>
    <message>
        <source>an image was attached here; the current model does not accept images</source>
        <translation>此处附有一张图片；当前模型不接受图片</translation>
    </message>
    <message>
        <source>The model {model} does not accept images: choose a model with vision, or remove the images (a model the app does not know is assumed to accept them; Settings &gt; Context &gt; Images can say otherwise).</source>
        <translation>模型 {model} 不接受图片：请选择支持视觉的模型，或移除图片（本应用不认识的模型默认视为接受图片；可在“设置 &gt; 上下文 &gt; 图片”中更改）。</translation>
    </message>
    <message>
        <source>Images cannot be attached to a command; send them with a message.</source>
        <translation>命令不能附带图片；请随消息一起发送。</translation>
    </message>
</context>
<context>
    <name>formatting</name>
    <message>
        <source>Chat</source>
        <translation>聊天</translation>
    </message>
    <message>
        <source>Agent</source>
        <translation>智能体</translation>
    </message>
    <message>
        <source>Workflow</source>
        <translation>工作流</translation>
    </message>
    <message>
        <source>No messages</source>
        <translation>没有消息</translation>
    </message>
    <message>
        <source>1 message</source>
        <translation>1 条消息</translation>
    </message>
    <message>
        <source>{count} messages</source>
        <translation>{count} 条消息</translation>
    </message>
    <message>
        <source>{detail} · streaming…</source>
        <translation>{detail} · 正在生成…</translation>
    </message>
    <message>
        <source>just now</source>
        <translation>刚刚</translation>
    </message>
    <message>
        <source>{minutes} min ago</source>
        <translation>{minutes} 分钟前</translation>
    </message>
    <message>
        <source>{hours} h ago</source>
        <translation>{hours} 小时前</translation>
    </message>
    <message>
        <source>yesterday</source>
        <translation>昨天</translation>
    </message>
</context>
<context>
    <name>labels</name>
    <message>
        <source>Demo (offline script)</source>
        <extracomment>Providers in the order the LLM page lists them: the demo, then resources/providers.json.</extracomment>
        <translation>演示（离线脚本）</translation>
    </message>
    <message>
        <source>OpenAI</source>
        <translation>OpenAI</translation>
    </message>
    <message>
        <source>OpenAI-compatible (custom URL)</source>
        <translation>兼容 OpenAI（自定义 URL）</translation>
    </message>
    <message>
        <source>{name} (on this computer)</source>
        <translation>{name}（本机）</translation>
    </message>
    <message>
        <source>Follow the system</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <source>Light</source>
        <translation>浅色</translation>
    </message>
    <message>
        <source>Dark</source>
        <translation>深色</translation>
    </message>
    <message>
        <source>A scripted model inside CrewAgent: no network, no key, always the same answers. Good for trying the app.</source>
        <translation>CrewAgent 内置的脚本模型：无需网络和密钥，回答始终相同，适合试用。</translation>
    </message>
    <message>
        <source>Any server that speaks the OpenAI chat API.</source>
        <translation>任何支持 OpenAI 聊天接口的服务器。</translation>
    </message>
    <message>
        <source>The deployment&apos;s URL from the Azure portal; requests carry api-version {version}. Type the deployment name as the model.</source>
        <translation>填写 Azure 门户中部署的 URL；请求会带上 api-version {version}。模型处请填写部署名称。</translation>
    </message>
    <message>
        <source>Runs on this computer, no key needed. Start {name}, then fetch its models.</source>
        <translation>在本机运行，无需密钥。先启动 {name}，再获取模型列表。</translation>
    </message>
    <message>
        <source>Give the address of your {name}; a key only if you set one.</source>
        <translation>填写你的 {name} 的地址；仅在你设置了密钥时才需要填写密钥。</translation>
    </message>
    <message>
        <source>Needs an API key from {name}.</source>
        <translation>需要 {name} 的 API 密钥。</translation>
    </message>
    <message>
        <source>{url} (leave empty for the default)</source>
        <translation>{url}（留空使用默认值）</translation>
    </message>
    <message>
        <source>e.g. llama3.1</source>
        <translation>例如 llama3.1</translation>
    </message>
</context>
<context>
    <name>markdown</name>
    <message>
        <source>Copy</source>
        <extracomment>The href prefix of a code block&apos;s Copy link; the rest is the block&apos;s index. Link schemes a click may open; anything else is shown as text. The Pygments style of highlighted code. Table rules and the header row&apos;s background (tables get borders and padding, as on GitHub). By theme name, from the theme&apos;s tokens.</extracomment>
        <translation>复制</translation>
    </message>
</context>
</TS>
