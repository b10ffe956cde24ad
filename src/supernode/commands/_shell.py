"""The CLI shell around every command: one-line errors, signals, exit codes.

:class:`SupernodeGroup` is the root command group's class, so whatever runs the app (the
console script, ``python -m supernode.cli``, typer's ``CliRunner``) and whichever command
runs, including commands added later, gets the same behaviour:

* a usage error (unknown option or command, a value the option's type refuses, a number
  out of its documented range (:mod:`._option_limits`), a missing argument) is one
  ``error: --option: what is allowed`` line on stderr (worded by :mod:`._usage`), exit
  code 2 (no panel, no help text);
* ``supernode`` or a command group with nothing after it prints its help, exit 0;
* SIGTERM/SIGHUP are handled like SIGINT (:mod:`supernode.shutdown`): ``finally`` blocks
  clean up, exit 128 + the signal (143, 129; 130 for SIGINT);
* an unexpected exception (a defect of the toolkit, not of the input) is one
  ``error: internal error: ...`` line, exit 70; ``SUPERNODE_TRACEBACK=1`` shows the
  traceback instead;
* a closed pipe on stdout (``supernode catalog list | head -1``) ends quietly with exit
  141, the shell's code for a process ended by SIGPIPE (not 1, the verdict code); a
  stdout that cannot be written (``> /dev/full``: no space, an I/O error) or is closed
  (``>&-``) is one ``error: stdout: ...`` line, exit 2.
"""

from __future__ import annotations

import errno
import gc
import os
import sys
import traceback
from typing import Any

import typer
from typer.core import TyperGroup

from supernode.commands._usage import click_exceptions, usage_error
from supernode.errors import InputError, StdoutClosed
from supernode.shutdown import Terminated, handle_termination, interrupted_exit_code
from supernode.textsafe import one_line

#: Exit codes.
#: 70 is EX_SOFTWARE (sysexits.h): exit 1 stays free for verdicts (check, compare
#: --fail-below, health --fail-on), so CI can tell a failed gate from a defect.
EXIT_OK, EXIT_INTERNAL, EXIT_USAGE, EXIT_INTERRUPTED = 0, 70, 2, 130
#: A closed pipe on stdout: 128 + SIGPIPE, what the shell reports for ``yes | head -1``.
EXIT_BROKEN_PIPE = 141
TRACEBACK_VARIABLE = "SUPERNODE_TRACEBACK"


def print_error(where: str, message: str) -> None:
    """Write ``error: where: message`` as one line on stderr."""
    line = f"error: {one_line(where)}: {one_line(message)}" if where else \
        f"error: {one_line(message)}"
    _write_stderr(line + "\n")


def _write_stderr(text: str) -> None:
    stream = sys.stderr
    try:
        stream.write(text)
        stream.flush()
    except (OSError, ValueError):  # stderr closed: nothing else to do
        pass


def _internal(exc: BaseException) -> int:
    """One line for a defect (exit 70), or the traceback when asked for."""
    if os.environ.get(TRACEBACK_VARIABLE):
        traceback.print_exception(exc)
        return EXIT_INTERNAL
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames \
        else ""
    kind = "out of memory" if isinstance(exc, MemoryError) else type(exc).__name__
    print_error("internal error", f"{kind}{where}: {exc} (a defect of supernode, not of "
                                  f"your input; {TRACEBACK_VARIABLE}=1 shows the traceback)")
    return EXIT_INTERNAL


def _quiet_stdout() -> None:
    """After EPIPE on stdout: point it at /dev/null so the interpreter's flush is silent."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def run_group(group: TyperGroup, args: Any, prog_name: Any, complete_var: Any,
              extra: dict[str, Any]) -> int:
    """Run ``group`` (non-standalone) and map every outcome to an exit code; after a
    signal, the exit code says so whatever exception it turned into."""
    code = _run_group(group, args, prog_name, complete_var, extra)
    interrupted = interrupted_exit_code()
    return interrupted if interrupted is not None and code != EXIT_OK else code


#: The functions that write a command's output to stdout (rich's console, click's echo,
#: :func:`supernode.commands._output.print_json`): an OSError raised in one of them is the
#: output stream's (no space, an I/O error), not a defect.
_STDOUT_WRITERS = frozenset({"_check_buffer", "_write_buffer", "echo", "print_json"})


def _stdout_failed(exc: BaseException) -> bool:
    """True when ``exc`` was raised while writing the command's output."""
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and frames[-1].name in _STDOUT_WRITERS


def _run_group(group: TyperGroup, args: Any, prog_name: Any, complete_var: Any,
               extra: dict[str, Any]) -> int:
    if sys.stdout is None:
        print_error("stdout", "standard output is closed; redirect it (> FILE or > "
                              "/dev/null)")
        return EXIT_USAGE
    try:
        with handle_termination():
            result = TyperGroup.main(group, args, prog_name, complete_var,
                                     standalone_mode=False, **extra)
    except click_exceptions.NoArgsIsHelpError as exc:
        text = exc.format_message()  # rich help has already been printed, plain is returned
        if text.strip():
            sys.stdout.write(text + "\n")
        return EXIT_OK
    except click_exceptions.UsageError as exc:
        print_error(*usage_error(exc, group, args))
        return EXIT_USAGE
    except InputError as exc:  # raised outside a command's own handler
        print_error("", exc.render())
        return EXIT_USAGE
    except typer.Abort:
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Terminated as exc:
        return exc.exit_code
    except (BrokenPipeError, StdoutClosed):
        _quiet_stdout()
        return EXIT_BROKEN_PIPE
    except OSError as exc:
        if exc.errno == errno.EPIPE:
            _quiet_stdout()
            return EXIT_BROKEN_PIPE
        if _stdout_failed(exc):
            _quiet_stdout()  # the interpreter's last flush must not fail again
            print_error("stdout", f"cannot write: {exc.strerror or exc}")
            return EXIT_USAGE
        return _internal(exc)
    except click_exceptions.ClickException as exc:
        print_error("", exc.format_message())
        return getattr(exc, "exit_code", EXIT_USAGE)
    except Exception as exc:  # a defect: one line, not a traceback
        if interrupted_exit_code() is not None:  # a signal that became another exception
            return EXIT_INTERRUPTED
        return _internal(exc)  # MemoryError included: "out of memory at ..."
    return result if isinstance(result, int) and not isinstance(result, bool) else EXIT_OK


#: ``ctx.meta`` key set while the group's help is rendered (listing, not running).
_LISTING = "supernode.listing"

#: True from :func:`collect_after_loading` until the command is loaded.
_collector_held = False


def collect_after_loading() -> None:
    """Switch the garbage collector off until the command a command line names has been
    loaded (:meth:`SupernodeGroup.get_command`); then the objects its imports created are
    frozen out of the collector (:func:`gc.freeze`) and it is switched back on. For the
    console script: those objects live as long as the process, so the young-generation
    collections run among them while the modules are imported free almost nothing."""
    global _collector_held
    gc.disable()
    _collector_held = True


def _loaded() -> None:
    """The command is loaded: the collector back on (see :func:`collect_after_loading`)."""
    global _collector_held
    if _collector_held:
        _collector_held = False
        gc.freeze()
        gc.enable()


class SupernodeGroup(TyperGroup):
    """The root group (sub-groups such as ``catalog`` are plain TyperGroups): every
    invocation goes through :func:`run_group`; commands are imported when first asked for
    (:func:`supernode.commands.load_command`), and the help lists them from their source
    without importing them (:func:`supernode.commands.listing`)."""

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        """The command ``cmd_name``, loading its module on first use; while the help is
        rendered, a stand-in carrying only what the listing shows."""
        command = super().get_command(ctx, cmd_name)
        if command is None and ctx.meta.get(_LISTING):
            command = _stand_in(cmd_name)
        if command is None:
            from supernode.commands import load_command

            command = load_command(cmd_name)
            if command is not None:
                self.add_command(command, cmd_name)
        if command is not None and not ctx.meta.get(_LISTING):
            from supernode.commands._option_limits import bound_numeric_options

            bound_numeric_options(command)
        if not ctx.meta.get(_LISTING):
            _loaded()
        return command

    def list_commands(self, ctx: Any) -> list[str]:
        """Every command name, in typer's order: read from the command modules' source
        when they all can be read, else by importing every command module."""
        from supernode.commands import all_commands, listing

        listed = listing()
        if listed is None:
            for name, command in all_commands().items():
                if name not in self.commands:
                    self.add_command(command, name)
            return super().list_commands(ctx)
        names = [entry.name for entry in listed]
        return names + [name for name in super().list_commands(ctx) if name not in names]

    def format_help(self, ctx: Any, formatter: Any) -> None:
        """The help page; commands not yet imported are listed from their source."""
        ctx.meta[_LISTING] = True
        try:
            super().format_help(ctx, formatter)
        finally:
            ctx.meta.pop(_LISTING, None)

    def main(self, args: Any = None, prog_name: Any = None, complete_var: Any = None,
             standalone_mode: bool = True, windows_expand_args: bool = True,
             **extra: Any) -> Any:
        """Run the CLI; exit with the code (``standalone_mode``) or return it."""
        code = run_group(self, args, prog_name, complete_var,
                         {"windows_expand_args": windows_expand_args, **extra})
        if standalone_mode:
            sys.exit(code)
        return code


def _stand_in(name: str) -> Any:
    """A click command with the name, help and flags the listing shows for ``name``
    (None when no command module registers it)."""
    from typer.core import TyperCommand

    from supernode.commands import listing

    for entry in listing() or ():
        if entry.name == name:
            return TyperCommand(name, help=entry.help, short_help=entry.short_help,
                                hidden=entry.hidden, deprecated=entry.deprecated,
                                rich_help_panel=entry.rich_help_panel)
    return None
