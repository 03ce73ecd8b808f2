"""Maintainer helper: ``python -m fayd.models check [--sha]`` and
``python -m fayd.models digest ROLE…`` (prints the installed files' size and sha256 as
manifest TOML, to paste after a package version bump)."""

from __future__ import annotations

import argparse
import sys

from fayd.models.check import check_all, sha256_file
from fayd.models.manifest import default_paths, load_manifest


def _digest(roles: list[str]) -> int:
    manifest = load_manifest()
    for role in roles or list(manifest.roles):
        spec = manifest.role(role)
        for key, base in default_paths(spec).items():
            f = spec.files[key]
            if base is None:
                print(f"# {role}.{key}: package {f.module!r} not installed", file=sys.stderr)
                continue
            print(f"# roles.{role}.files.{key}")
            for d in f.digests:
                target = base / d.path if d.path else base
                if not target.is_file():
                    print(f"# missing: {target}", file=sys.stderr)
                    continue
                name = f'path = "{d.path}"\n' if d.path else ""
                size = target.stat().st_size
                print(f'{name}size = {size}\nsha256 = "{sha256_file(target)}"\n')
    return 0


def _check(verify_sha: bool) -> int:
    results = check_all(verify_sha)
    for r in results:
        print(f"{r.role:6} {r.status:9} {r.path}  {r.detail}")
        if not r.ok:
            print(f"       install: {r.install_hint}")
    return 1 if any(r.problem for r in results) else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fayd.models")
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_check = sub.add_parser("check", help="check the installed default models")
    p_check.add_argument("--sha", action="store_true", help="also verify sha256 digests")
    p_digest = sub.add_parser("digest", help="print size and sha256 of installed files")
    p_digest.add_argument("roles", nargs="*")
    args = parser.parse_args(argv)
    if args.cmd == "check":
        return _check(args.sha)
    return _digest(args.roles)


if __name__ == "__main__":
    sys.exit(main())
