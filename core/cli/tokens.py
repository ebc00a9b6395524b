"""`python -m core tokens`: personal API tokens (docs/api.md), also reached as `users token`.

python -m core tokens create bob                     # an API token, printed alone on the last line, once
python -m core tokens create bob --name "CI export"  # what the token is for (default: cli)
python -m core tokens create bob --days 30           # it answers 30 days (default 90, at most 366)
python -m core tokens list bob
python -m core tokens revoke 3
"""

from __future__ import annotations

import argparse
from dataclasses import asdict

from core.cli.output import STDOUT, add_output_options, say, write_json
from core.cli.projects import add_database_argument, existing_store
from core.errors import InputError
from core.services import auth, tokens
from core.services.outcome import Refused
from core.store import Store, json_safe

DEFAULT_LABEL = "cli"
"""The name of a token created without ``--name``."""


def add_actions(parser: argparse.ArgumentParser) -> None:
    """``create USER [--name LABEL]``, ``list USER``, ``revoke ID`` under ``parser`` (dest ``token_action``)."""
    sub = parser.add_subparsers(dest="token_action", required=True)
    create = sub.add_parser("create", help="a new token for the account, printed once on the last line")
    create.add_argument("name", metavar="USER", help="the account the token acts as")
    create.add_argument(
        "--name",
        dest="token_name",
        metavar="LABEL",
        default=DEFAULT_LABEL,
        help=f"what the token is for, e.g. 'CI export' (default: {DEFAULT_LABEL})",
    )
    create.add_argument(
        "--days",
        type=int,
        default=tokens.DEFAULT_DAYS,
        help=f"days the token answers, 1 to {tokens.MAX_DAYS} (default: {tokens.DEFAULT_DAYS}); then make a new one",
    )
    listed = sub.add_parser("list", help="the account's tokens (never their secrets)")
    listed.add_argument("name", metavar="USER")
    revoke = sub.add_parser("revoke", help="revoke a token by its id (from `list`)")
    revoke.add_argument("id", type=int)
    for action in sub.choices.values():
        add_output_options(action)
        add_database_argument(action, again=True)


def act(store: Store, args: argparse.Namespace) -> int:
    """Carry out ``args.token_action`` (create, list or revoke) as the operator."""
    if args.token_action == "create":
        info, secret = tokens.create(store, auth.OPERATOR, args.name, args.token_name, args.days)
        where = "in the JSON's 'token'" if args.json == STDOUT else "on the next line"
        say(
            args,
            f"created API token {info.id} ({info.name}) for {info.owner}, good until {_when(info.expires_at)}; it is "
            f"shown once, {where}:",
        )
        expires = json_safe(info.expires_at)
        write_json(
            args, {"id": info.id, "owner": info.owner, "name": info.name, "expires_at": expires, "token": secret}
        )
        if args.json != STDOUT:
            print(secret)
        return 0
    if args.token_action == "list":
        found = tokens.listed(store, auth.OPERATOR, args.name)
        say(args, "\n".join(_token_line(t) for t in found) or f"{args.name} has no API token")
        write_json(args, {"tokens": [json_safe(asdict(t)) | {"active": t.active} for t in found]})
        return 0
    outcome = tokens.revoke(store, auth.OPERATOR, args.id)
    say(args, outcome.message)
    write_json(args, {"status": outcome.status, "message": outcome.message})
    return 0


def _when(moment) -> str:
    return moment.isoformat(timespec="seconds")


def _token_line(token: tokens.TokenInfo) -> str:
    """One listed token: id, name, created (by whom), last used, state; tab-separated."""
    used = _when(token.last_used_at) if token.last_used_at else "never used"
    return f"{token.id}\t{token.name}\tcreated {_when(token.created_at)} by {token.created_by}\t{used}\t{_state(token)}"


def _state(token: tokens.TokenInfo) -> str:
    """'active until ...', 'expired ...', 'revoked ...', or 'active, never expires' (a token made before expiry)."""
    if token.revoked_at is not None:
        return f"revoked {_when(token.revoked_at)}"
    if token.expires_at is None:
        return "active, never expires (made before tokens expired: replace it)"
    return f"{'active until' if token.active else 'expired'} {_when(token.expires_at)}"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `tokens` command: the database, then an action."""
    add_database_argument(parser)
    add_actions(parser)


def run(args: argparse.Namespace) -> int:
    """`tokens ACTION ...`: a refusal is reported as bad input (exit status 2)."""
    try:
        return act(existing_store(args.db_url), args)
    except Refused as exc:
        raise InputError(str(exc)) from None
