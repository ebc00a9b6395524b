"""`python -m core users`: create accounts, change roles, assign projects, list accounts (for ops and the first admin).

The password is read from standard input (one line), never from the command
line, where other users of the machine could see it:

    echo "$ADMIN_PASSWORD" | python -m core users add alice --role admin
    python -m core users add bob --role grader --email bob@example.org   # OIDC only
    python -m core users assign bob "My project"
    python -m core users unlock alice   # end the sign-in back-off after failed tries
"""

from __future__ import annotations

import argparse
import sys

from core.errors import InputError
from core.services import auth
from core.store import Store, accounts

ACTOR = "cli"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", help="database URL (default: $ACTIVEGRADE_DB_URL or ./.activegrade/activegrade.db)")
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
        p.add_argument("project", help="project name")
    unlock = sub.add_parser("unlock", help="end an account's sign-in back-off (failed tries) at once")
    unlock.add_argument("name")
    sub.add_parser("list", help="list the accounts")


def _account(store: Store, name: str) -> accounts.UserInfo:
    found = accounts.user_by_name(store, auth.normalise_name(name))
    if found is None:
        raise InputError(f"no account named {name!r}", fix="create it with: python -m core users add NAME --role ROLE")
    return found


def _project_id(store: Store, name: str) -> int:
    project = store.project_by_name(name)
    if project is None:
        raise InputError(f"no project named {name!r}", fix="check the name on the app's Projects page")
    return project.id


def run(args: argparse.Namespace) -> int:
    store = Store.open(args.db)
    if args.action == "add":
        password = None if args.email else sys.stdin.readline().rstrip("\r\n")  # a line as Windows writes it too
        user = auth.create_account(store, args.name, args.role, password=password, email=args.email)
        accounts.record_event(store, ACTOR, "account_created", detail={"name": user.name, "role": user.role})
        print(f"created {user.role} account {user.name}")
    elif args.action == "role":
        auth.set_role(store, args.name, args.role)
        accounts.record_event(
            store, ACTOR, "account_changed", detail={"name": auth.normalise_name(args.name), "role": args.role}
        )
        print(f"{auth.normalise_name(args.name)} is now {args.role}")
    elif args.action in ("assign", "unassign"):
        user, project_id = _account(store, args.name), _project_id(store, args.project)
        (accounts.assign if args.action == "assign" else accounts.unassign)(store, project_id, user.id)
        event = "member_added" if args.action == "assign" else "member_removed"
        accounts.record_event(store, ACTOR, event, project_id=project_id, detail={"name": user.name})
        print(f"{user.name} {args.action}ed {'to' if args.action == 'assign' else 'from'} {args.project}")
    elif args.action == "unlock":
        user = _account(store, args.name)
        auth.unlock(store, user.name)
        accounts.record_event(store, ACTOR, "account_unlocked", detail={"name": user.name})
        print(f"{user.name} may sign in again")
    else:
        for user in accounts.users(store):
            print(f"{user.name}\t{user.role}\t{user.email or ''}\t{'active' if user.active else 'disabled'}")
    return 0
