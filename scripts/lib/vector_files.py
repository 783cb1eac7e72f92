"""Writing and checking a dialect's committed vector files, one way for every generator.

Each family's generator (scripts/<family>/<family>_vectors.py: v1, npk, qring, huami) builds its
vectors in memory as {file name: text}; `run` either writes them under protocol-spec/<family>/vectors/ or,
with --check, compares them with the files on disk and names the stale ones with the command that
makes them again (scripts/test runs every generator with --check).
"""

import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def render(obj, indent=1):
    """A vector file's text: JSON as the Swift tests read it, non-ASCII kept, a final newline."""
    return json.dumps(obj, indent=indent, ensure_ascii=False) + "\n"


def vector_count(text):
    """A file holds a list of vectors, or an object of lists (one per message kind)."""
    vectors = json.loads(text)
    return len(vectors) if isinstance(vectors, list) else sum(len(v) for v in vectors.values())


def stale_files(vector_dir, files):
    stale = []
    for name, text in files.items():
        try:
            with open(os.path.join(vector_dir, name), encoding="utf-8") as f:
                on_disk = f.read()
        except OSError:
            on_disk = None
        if on_disk != text:
            stale.append(name)
    return stale


def run(description, vector_dir, generate, label, regenerate_command, argv=None, before=None):
    """The generator's command line: write the files, or --check them; returns the exit status.

    `label` names the vectors in messages ("NPK vectors"); `before`, when given, is a check run
    first that returns a message on failure (qring: real rings' bytes read as colmi-r02-client reads them).
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true",
                        help="regenerate in memory; exit 1 if the files on disk differ")
    args = parser.parse_args(argv)
    if before is not None:
        failure = before()
        if failure:
            print(failure, file=sys.stderr)
            return 1
    files = generate()
    shown_dir = os.path.relpath(vector_dir, ROOT)
    if args.check:
        stale = stale_files(vector_dir, files)
        if stale:
            print("%s out of date: %s (run %s)" % (label, ", ".join(os.path.join(shown_dir, n) for n in stale),
                                                   regenerate_command), file=sys.stderr)
            return 1
        print("%s up to date" % label)
        return 0
    os.makedirs(vector_dir, exist_ok=True)
    for name, text in files.items():
        with open(os.path.join(vector_dir, name), "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        print("wrote %s (%d vectors)" % (os.path.join(shown_dir, name), vector_count(text)))
    return 0
