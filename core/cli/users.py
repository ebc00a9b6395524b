"""`python -m core users`: create accounts, change roles, assign projects, list accounts (for ops and the first admin).

The password is read from standard input (one line), never from the command
line, where other users of the machine could see it:

    echo "$ADMIN_PASSWORD" | python -m core users add alice --role admin
    python -m core users add bob --role grader --email bob@example.org   # OIDC only
    python -m core users assign bob "My project"
    python -m core users unlock alice   # end the sign-in back-off after failed tries
    python -m core users disable bob    # his sessions end, his tokens stop answering; `enable` undoes it
    echo "$NEW_PASSWORD" | python -m core users password alice   # a forgotten password
    python -m core users token create bob --name "CI export"   # API tokens: the same as `tokens` (core/cli/tokens.py)
    python -m core users token list bob
    python -m core users token revoke 3
"""

from __future__ import annotations

import argparse
import sys

from core.cli import tokens as token_command
from core.cli.output import add_output_options, say, write_json
from core.cli.projects import add_database_argument, find_project
from core.errors import InputError
from core.services import auth, team
from core.services.outcome import Refused
from core.store import Store, accounts


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_database_argument(parser)
    sub = parser.add_subparsers(dest="action", required=True)
    add = sub.add_parser("add", help="create an account; its password is read from standard input")
    add.add_argument("name")
    add.add_argument("--role", choices=auth.ROLES, required=True)
    add.add_argument("--email", help="e-mail for OIDC sign-in; with it, no password is asked for")
    role = sub.add_parser("role", help="change an account's role")
    role.add_argument("name")
    role.add_argument("role", choices=auth.ROLES)
    for verb, text in (("assign", "assign an account to a project"), ("unassign", "take an account off a project")):
        p = sub.add_parser(verb, help=text)
        p.add_argument("name")
        p.add_argument("project", help="project id or name")
    unlock = sub.add_parser("unlock", help="end an account's sign-in back-off (failed tries) at once")
    unlock.add_argument("name")
    for verb, text in (
        ("disable", "disable an account: its sessions end and its API tokens stop answering"),
        ("enable", "enable a disabled account again (its tokens not revoked answer again)"),
        ("password", "set an account's password, read from standard input (a forgotten one, say)"),
    ):
        sub.add_parser(verb, help=text).add_argument("name")
    sub.add_parser("list", help="list the accounts")
    token_command.add_actions(sub.add_parser("token", help="personal API tokens (docs/api.md): create, list, revoke"))
    for action in sub.choices.values():  # after the action, as `users list --json -` reads
        add_output_options(action)
        add_database_argument(action, again=True)


def run(args: argparse.Namespace) -> int:
    store = Store.open(args.db_url)
    actor = auth.OPERATOR
    try:
        if args.action == "token":
            return token_command.act(store, args)
        if args.action == "add":
            password = None if args.email else sys.stdin.readline().rstrip("\r\n")  # a line as Windows writes it too
            outcome = team.create_account(store, actor, args.name, args.role, password=password, email=args.email)
        elif args.action == "role":
            outcome = team.change_account(store, actor, args.name, role=args.role)
        elif args.action == "assign":
            outcome = team.assign(store, actor, find_project(store, args.project).id, args.name)
        elif args.action == "unassign":
            outcome = team.unassign(store, actor, find_project(store, args.project).id, args.name)
        elif args.action == "unlock":
            outcome = team.unlock(store, actor, args.name)
        elif args.action in ("disable", "enable"):
            outcome = team.change_account(store, actor, args.name, active=args.action == "enable")
        elif args.action == "password":
            outcome = team.change_account(store, actor, args.name, password=sys.stdin.readline().rstrip("\r\n"))
        else:
            users = accounts.users(store)
            say(
                args,
                "\n".join(
                    f"{u.name}\t{u.role}\t{u.email or ''}\t{'active' if u.active else 'disabled'}" for u in users
                ),
            )
            write_json(
                args, {"users": [{"name": u.name, "role": u.role, "email": u.email, "active": u.active} for u in users]}
            )
            return 0
    except Refused as exc:
        raise InputError(str(exc)) from None
    say(args, outcome.message)
    write_json(args, {"status": outcome.status, "message": outcome.message})
    return 0
