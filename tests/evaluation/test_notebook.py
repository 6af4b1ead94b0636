"""The Python API in a real Jupyter kernel (nbclient), with ipywidgets installed as `pip install jupyter` installs
it: the run's live bar is drawn as a widget, and the run completes and scores."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

CELLS = [
    "import sys, rich.console\nprint(sys.executable)\nassert rich.console.Console().is_jupyter",
    "import zeroscrolls\nrun = zeroscrolls.evaluate(model='naive', data='sample', output='results')",
    "print(run.status)\nprint(sorted(run.scores.items()))\nassert run.status == 'complete', run.stopped",
]


def executed(folder: Path, cells: list[str]) -> nbformat.NotebookNode:
    """`cells` run in order in a new python3 kernel whose working folder is `folder`; any cell raising fails."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
    client = NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(folder)}})
    client.execute()
    return notebook


def outputs(cell: nbformat.NotebookNode) -> list[dict]:
    return [dict(output) for output in cell.outputs]


def test_evaluate_in_a_jupyter_kernel_draws_its_bar_as_a_widget_and_scores(tmp_path: Path) -> None:
    notebook = executed(tmp_path, CELLS)
    assert sys.executable in notebook.cells[0].outputs[0]["text"]  # the kernel runs this environment
    drawn = outputs(notebook.cells[1])
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in drawn), drawn
    assert not [o for o in drawn if o["output_type"] == "error"], drawn
    printed = "".join(o.get("text", "") for o in outputs(notebook.cells[2]))
    assert printed.splitlines()[0] == "complete", printed
    assert "('quality', 50.0)" in printed and "None" not in printed
    assert (tmp_path / "results" / "naive_validation" / "scores.json").is_file()
