"""ElasticMemory formats its blocks with LlamaIndex's default template compiled once: the same messages."""

from __future__ import annotations

from pathlib import Path

from llama_index.core.base.llms.types import ImageBlock, TextBlock
from llama_index.core.llms import ChatMessage
from llama_index.core.memory.memory import DEFAULT_MEMORY_BLOCKS_TEMPLATE
from llama_index.core.prompts import RichPromptTemplate

from llama_index.memory.elastic_memory import ElasticMemory
from llama_index.memory.elastic_memory.base import _DEFAULT_TEMPLATE

PNG = "data:image/png;base64,iVBORw0KGgo="


def test_text_blocks_render_as_llamaindex_renders_them() -> None:
    blocks = [("Facts", [TextBlock(text="The user lives in Leeds.")]), ("More", [TextBlock(text="a\nb")])]
    ours = _DEFAULT_TEMPLATE.format_messages(memory_blocks=blocks)
    assert ours == DEFAULT_MEMORY_BLOCKS_TEMPLATE.format_messages(memory_blocks=blocks)


def test_an_image_block_renders_as_llamaindex_renders_it() -> None:
    blocks = [("Pictures", [TextBlock(text="a cat"), ImageBlock(url=PNG)])]
    ours = _DEFAULT_TEMPLATE.format_messages(memory_blocks=blocks)
    assert ours == DEFAULT_MEMORY_BLOCKS_TEMPLATE.format_messages(memory_blocks=blocks)


def test_a_memory_gets_the_same_messages_as_with_llamaindexs_template(tmp_path: Path) -> None:
    said = [ChatMessage(role="user", content="My dog is called Biscuit."), ChatMessage(role="assistant", content="Hi!")]
    asked = ChatMessage(role="user", content="What is my dog called?")
    plain = RichPromptTemplate(DEFAULT_MEMORY_BLOCKS_TEMPLATE.template_str)
    got = []
    for n, template in enumerate([None, plain]):
        extra = {} if template is None else {"memory_blocks_template": template}
        with ElasticMemory.from_defaults(tmp_path / f"{n}.db", session_id="s", embedder=None, **extra) as memory:
            memory.put_messages(said)
            got.append(memory.get(input=asked.content))
    assert got[0] == got[1]
    assert any("Biscuit" in (m.content or "") for m in got[0] if m.role.value == "system")
