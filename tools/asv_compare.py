"""Compare the asv results of two commits and fail on a regression (``hatch run asv:compare``).

``asv compare`` prints the table but always exits 0; this wrapper prints the same table
(through asv's own ``Compare.print_table``) and exits 1 when a benchmark got slower by more
than ``--factor`` (default 1.2, significant by asv's statistics), so it can gate a change::

    hatch run asv:run "HEAD~1^!" && hatch run asv:run "HEAD^!"
    hatch run asv:compare HEAD~1 HEAD
    hatch run asv:compare HEAD~1 HEAD --factor 1.5 --only-changed

Both commits need results on the machine (``asv:continuous A B`` runs and compares in one go).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from asv import util
from asv.commands.compare import Compare
from asv.config import Config
from asv.repo import NoSuchNameError, get_repo

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revision1")
    parser.add_argument("revision2")
    parser.add_argument("--machine", required=True)
    parser.add_argument("--factor", type=float, default=1.2)
    parser.add_argument("--only-changed", action="store_true")
    parser.add_argument("--no-split", action="store_true", help="one table, not grouped")
    parser.add_argument("--config", default=str(ROOT / "asv.conf.json"))
    args = parser.parse_args(argv)

    conf = Config.load(args.config)
    repo = get_repo(conf)
    hashes = []
    for name in (args.revision1, args.revision2):
        try:
            hashes.append(repo.get_hash_from_name(name))
        except NoSuchNameError:
            print(f"asv_compare: unknown revision {name!r}", file=sys.stderr)
            return 2
    try:
        worsened, improved = Compare.print_table(
            conf,
            hashes[0],
            hashes[1],
            factor=args.factor,
            split=not args.no_split,
            machine=args.machine,
            only_changed=args.only_changed,
            commit_names={h: repo.get_name_from_hash(h) for h in hashes},
        )
    except util.UserError as exc:
        print(f"asv_compare: {exc}", file=sys.stderr)
        return 2
    if worsened:
        print(
            f"\nasv_compare: PERFORMANCE DECREASED between {args.revision1} and "
            f"{args.revision2} (factor {args.factor})"
        )
        return 1
    print(
        f"\nasv_compare: no significant regression (factor {args.factor})"
        + ("; some benchmarks improved" if improved else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
