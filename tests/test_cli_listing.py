"""``supernode --help`` lists every command from the modules' source, importing none of
them, and shows exactly what typer shows once every module is imported."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import typer.main

from supernode.commands import COMMAND_MODULES, all_commands, app, listing
from supernode.commands._listing import listed_commands, read_module

ENV = {**os.environ, "COLUMNS": "100", "TERM": "dumb", "NO_COLOR": "1"}


def _python(code: str, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=ENV if env is None else env, check=False)


def test_every_command_module_is_read_without_importing_it() -> None:
    listed = listing()
    assert listed is not None, listed_commands(COMMAND_MODULES)[1]  # unreadable modules
    assert len({entry.name for entry in listed}) == len(listed)


def test_what_is_read_equals_what_typer_builds() -> None:
    listed = listing()
    assert listed is not None
    commands = all_commands()
    assert [entry.name for entry in listed] == list(
        typer.main.get_command(app).list_commands(None))  # type: ignore[arg-type]
    assert {entry.name for entry in listed} == set(commands)
    for entry in listed:
        real = commands[entry.name]
        assert (entry.help, entry.short_help, entry.hidden, entry.deprecated) == \
            (real.help, real.short_help, real.hidden, real.deprecated), entry.name
        panel = getattr(real, "rich_help_panel", None)
        assert entry.rich_help_panel == getattr(panel, "value", panel)  # typer's default


def test_help_imports_no_command_and_prints_what_the_imported_app_prints() -> None:
    lazy = _python("import sys\nfrom supernode.cli import main\ntry:\n    main(['--help'])\n"
                   "except SystemExit:\n    pass\nprint(sorted(m for m in sys.modules if "
                   "m.startswith('supernode.commands.') and m.count('.') == 2 and not "
                   "m.rsplit('.', 1)[1].startswith('_')), file=sys.stderr)")
    eager = _python("from supernode.commands import app, register_all\nregister_all()\n"
                    "app(['--help'], prog_name='supernode')")
    assert lazy.returncode == 0 and eager.returncode == 0, lazy.stderr + eager.stderr
    assert lazy.stderr.strip() == "[]"  # no command module imported
    assert lazy.stdout == eager.stdout
    for entry in listing() or ():
        assert entry.name in lazy.stdout


def test_an_unknown_command_in_a_fresh_process_lists_the_commands() -> None:
    proc = _python("from supernode.cli import main\nmain(['simulat'])")
    assert proc.returncode == 2
    assert "did you mean simulate" in proc.stderr and "topology, validate)" in proc.stderr


def test_a_module_the_reader_cannot_state_is_imported_instead(tmp_path, monkeypatch) -> None:
    (tmp_path / "lazy_ok.py").write_text(textwrap.dedent('''
        import typer
        from supernode.commands import app
        sub = typer.Typer(help="A group.")
        app.add_typer(sub, name="grp")

        @app.command("one", hidden=True)
        def one() -> None:
            """First line.

            More."""
    '''))
    (tmp_path / "lazy_computed.py").write_text(textwrap.dedent('''
        from supernode.commands import app
        WHAT = "computed"

        @app.command("two", help=f"{WHAT} help")
        def two() -> None:
            pass
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    commands, groups = read_module("lazy_ok")  # type: ignore[misc]
    assert [(c.name, c.help, c.hidden) for c in commands] == [("one", "First line.\n\nMore.",
                                                               True)]
    assert [(g.name, g.help) for g in groups] == [("grp", "A group.")]
    assert read_module("lazy_computed") is None
    listed, unreadable = listed_commands(("lazy_computed", "lazy_ok"))
    assert unreadable == ["lazy_computed"] and [e.name for e in listed] == ["one", "grp"]


def test_the_console_script_tunes_its_process_and_a_caller_keeps_its_own() -> None:
    """Run as the console script: the collector off while the command is imported and on
    again once it is loaded, objects frozen, a larger young generation and one BLAS thread
    (unless the environment says); called with argv: none of it."""
    code = ("import gc, os, sys\nfrom supernode.cli import main, GC_YOUNG_THRESHOLD\n"
            "sys.argv = {argv!r}\ntry:\n    main({arg})\nexcept SystemExit as exc:\n"
            "    print(exc.code, gc.isenabled(), gc.get_freeze_count() > 0,\n"
            "          gc.get_threshold()[0] == GC_YOUNG_THRESHOLD,\n"
            "          os.environ.get('OPENBLAS_NUM_THREADS'))")
    bare = {k: v for k, v in ENV.items() if k != "OPENBLAS_NUM_THREADS"}
    script = _python(code.format(argv=["supernode", "catalog", "list"], arg=""), bare)
    caller = _python(code.format(argv=["python"], arg="['catalog', 'list']"), bare)
    assert script.stdout.split()[-5:] == ["0", "True", "True", "True", "1"], script.stderr
    assert caller.stdout.split()[-5:] == ["0", "True", "False", "False", "None"], caller.stderr
    told = _python(code.format(argv=["supernode", "catalog", "list"], arg=""),
                   {**bare, "OPENBLAS_NUM_THREADS": "3"})
    assert told.stdout.split()[-1] == "3", told.stderr


def test_the_collector_is_held_until_the_command_is_loaded() -> None:
    """After :func:`collect_after_loading` the collector stays off until the command line's
    command is loaded, then the imported objects are frozen and it is on again."""
    code = ("import gc\nfrom supernode.commands._shell import collect_after_loading\n"
            "from supernode.cli import main\ncollect_after_loading()\nheld = gc.isenabled()\n"
            "try:\n    main(['catalog', 'list'])\nexcept SystemExit:\n    pass\n"
            "print(held, gc.isenabled(), gc.get_freeze_count() > 0)")
    proc = _python(code, ENV)
    assert proc.stdout.split()[-3:] == ["False", "True", "True"], proc.stderr
