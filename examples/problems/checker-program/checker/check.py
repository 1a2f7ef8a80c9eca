"""A graph 3-colouring checker over the assay /input,/output protocol (standard library only).

Reads the graph bound as reference key "graph" (a file: "VERTICES EDGES", then one edge "U V"
per line, vertices numbered from 0, "#" lines are comments) and the colouring submitted as role
"coloring" (one colour per vertex, in vertex order, whitespace-separated, each 0, 1 or 2), and
writes /output/result.json:
  verified      every vertex has a colour in {0, 1, 2} and no edge joins two of one colour;
  refuted       the colouring is malformed, has the wrong length, uses another colour, or
                colours both ends of an edge alike (the first such edge is named);
  inconclusive  the graph itself cannot be read (the author's problem, not the work's).
"""

import json
import sys
from pathlib import Path

INPUT, OUTPUT = Path("/input"), Path("/output")
COLOURS = {"0", "1", "2"}


def conclude(result, summary, **extra):
    (OUTPUT / "result.json").write_text(json.dumps({"result": result, "summary": summary, **extra}))
    sys.exit(0)


def only_file(folder):
    files = sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []
    return files[0] if len(files) == 1 else None


def read_graph(path):
    lines = [
        line.split()
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if not lines or len(lines[0]) != 2:
        raise ValueError("the first line must be 'VERTICES EDGES'")
    vertices, count = int(lines[0][0]), int(lines[0][1])
    edges = [(int(u), int(v)) for u, v in lines[1:]]
    if len(edges) != count:
        raise ValueError(f"the header says {count} edges, the file has {len(edges)}")
    for u, v in edges:
        if not (0 <= u < vertices and 0 <= v < vertices):
            raise ValueError(f"edge {u} {v} names a vertex outside 0..{vertices - 1}")
    return vertices, edges


def main():
    graph = only_file(INPUT / "reference" / "graph")
    if graph is None:
        conclude("inconclusive", "exactly one graph file is required under reference/graph")
    try:
        vertices, edges = read_graph(graph)
    except (ValueError, UnicodeDecodeError) as exc:
        conclude("inconclusive", f"the graph cannot be read: {exc}")
    submitted = only_file(INPUT / "artifacts" / "coloring")
    if submitted is None:
        conclude("refuted", "submit exactly one colouring file")
    try:
        tokens = submitted.read_text(encoding="utf-8").split()
    except UnicodeDecodeError:
        conclude("refuted", "the colouring is not UTF-8 text")
    if len(tokens) != vertices:
        conclude("refuted", f"{len(tokens)} colours given for {vertices} vertices")
    for vertex, token in enumerate(tokens):
        if token not in COLOURS:
            conclude("refuted", f"vertex {vertex} has colour {token[:20]!r}: use 0, 1 or 2")
    for u, v in edges:
        if tokens[u] == tokens[v]:
            conclude(
                "refuted", f"edge {u}-{v} joins two vertices of colour {tokens[u]}", edge=[u, v]
            )
    conclude("verified", f"a proper 3-colouring: {len(edges)} edges, no two ends alike")


main()
