"""``finegrain passages`` (documents -> passages of bounded length) and ``finegrain distant-label``
(passages -> qrels by answer-span F1): thin commands over :mod:`finegrain.build.passages` and
:mod:`finegrain.build.distant`."""

from __future__ import annotations

from pathlib import Path

import typer

from finegrain.cli import options as opt


def passages_command(
    corpus: str = typer.Argument(..., help="Documents: a corpus JSON-lines file (_id/id, title, text), a TSV "
                                 "file (DuReader passage columns, or --column), or a dataset name or folder."),
    max_chars: int = typer.Option(256, "--max-chars", min=1, help="At most this many characters per passage."),
    stride: int = typer.Option(0, "--stride", min=0, help="Consecutive passages share up to this many "
                               "characters (0: no overlap; less than --max-chars)."),
    out: Path = opt.out_option("The passages: a BEIR corpus.jsonl (a folder gets corpus.jsonl inside)."),
    column: int | None = typer.Option(None, "--column", min=1, help="TSV files: the column (1-based) that "
                                      "holds the documents."),
    lang: str | None = opt.lang_option("Language of the documents (default: the dataset's, else detected).", None),
) -> None:
    """Split documents into passages of at most --max-chars characters, between sentences where possible.

    Passage ids are {doc_id}#p{n} (n from 0 in document order); each record of
    the output also names its document and offsets (doc_id, start, end).
    """
    from finegrain.build.passages import check_lengths, split_passages, write_passages
    from finegrain.build.textset import read_text_set

    check_lengths(max_chars, stride)
    docs = read_text_set(corpus, "passages", column=column)
    ps = split_passages(docs, max_chars=max_chars, stride=stride, lang=lang)
    path = write_passages(ps, out)
    typer.echo(f"{len(ps)} passages from {ps.n_documents} documents ({ps.n_empty_documents} without text), "
               f"at most {max_chars} characters (longest {ps.longest}), stride {stride}, lang {ps.lang}; "
               f"{ps.n_hard_cuts} cuts inside over-long sentences")
    typer.echo(f"wrote {path}")


def distant_label_command(
    passages: str = typer.Argument(..., help="Passages: the corpus.jsonl of 'finegrain passages' (or any corpus "
                                   "file, TSV or dataset)."),
    answers: Path = typer.Option(..., "--answers", help="JSON lines {\"query_id\", \"answers\": [...], "
                                 "\"doc_ids\": [...] (optional: the candidate documents)}."),
    threshold: float = typer.Option(0.5, "--threshold", help="Label a passage relevant when a span of it has "
                                    "F1 >= this with an answer (DuReader: 0.5)."),
    out: Path = opt.out_option("The qrels: BEIR TSV 'query-id corpus-id score' (1 relevant; 0 for candidates "
                               "named by doc_ids that fall short)."),
    details: Path | None = typer.Option(None, "--details", help="Also write each relevant pair's F1, answer "
                                        "and best span as JSON lines."),
    lang: str | None = opt.lang_option("Language: zh compares characters, en words (default: detected).", None),
) -> None:
    """Label passages relevant to queries by answer-span F1 (DuReader-retrieval, Algorithm 1)."""
    from finegrain.build.distant import check_threshold, distant_label, read_answers, write_details, write_qrels
    from finegrain.build.textset import read_text_set

    check_threshold(threshold)
    ans = read_answers(answers)
    ps = read_text_set(passages, "passages")
    labels = distant_label(ps, ans, threshold=threshold, lang=lang)
    typer.echo(labels.summary())
    typer.echo(f"wrote {write_qrels(labels, out)} ({len(labels.labels)} relevant, {len(labels.negatives)} "
               "not relevant)")
    if details is not None:
        typer.echo(f"wrote {write_details(labels, details)}")
