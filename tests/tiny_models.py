"""Builders of tiny Hugging Face artefacts for tests: made offline in a few milliseconds, saved with
`save_pretrained`, loaded back through the real `from_pretrained` paths."""

from __future__ import annotations

from pathlib import Path

TINY_CORPUS = [
    "You are given a story, which can be either a novel or a movie script, and a question. Answer the question.",
    "Story:\nTom met Ann in Paris. They married in May.\n\nQuestion:\nWhere did Tom meet Ann?\n\nAnswer:\n",
    "You are given a report by a government agency. Write a one-page summary of the report.\n\nReport:\n",
    "The committee approved the new budget for 2024. The quick brown fox jumps over the lazy dog.",
    "... [The rest of the story is omitted]\n\n... [The rest of the report is omitted]\n\nSummary:\n",
]


def build_tiny_t5_tokenizer(path: Path) -> Path:
    """A T5-style tokenizer at `path`: byte-level BPE (exact round trip of any text), `</s>` appended to every
    encoded sequence by the post-processor, `<pad>` id 0, `</s>` id 1, `<unk>` id 2, as in T5."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<pad>", "</s>", "<unk>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(TINY_CORPUS, trainer=trainer)
    eos_id = tok.token_to_id("</s>")
    tok.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", eos_id)]
    )
    wrapped = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="</s>", pad_token="<pad>", unk_token="<unk>", model_max_length=512
    )
    path.mkdir(parents=True, exist_ok=True)
    wrapped.save_pretrained(path)
    return path
