"""The CLI shell around every command: one-line errors, signals, exit codes.

:class:`SupernodeGroup` is the root command group's class, so whatever runs the app (the
console script, ``python -m supernode.cli``, typer's ``CliRunner``) and whichever command
runs, including commands added later, gets the same behaviour:

* a usage error (unknown option or command, a value the option's type refuses, a number
  out of its documented range (:mod:`._option_limits`), a missing argument) is one
  ``error: --option: what is allowed`` line on stderr, exit code 2 (no panel, no help
  text);
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

import difflib
import errno
import os
import sys
import traceback
from typing import Any

import typer
from typer.core import TyperGroup

from supernode.errors import InputError, StdoutClosed
from supernode.shutdown import Terminated, handle_termination, interrupted_exit_code
from supernode.textsafe import one_line

try:  # typer >= 0.26 carries its own copy of click
    from typer._click import exceptions as click_exceptions
except ImportError:  # pragma: no cover - older typer on click
    # the same module, from click itself
    import click.exceptions as click_exceptions  # type: ignore[no-redef]

#: Exit codes.
#: 70 is EX_SOFTWARE (sysexits.h): exit 1 stays free for verdicts (check, compare
#: --fail-below, health --fail-on), so CI can tell a failed gate from a defect.
EXIT_OK, EXIT_INTERNAL, EXIT_USAGE, EXIT_INTERRUPTED = 0, 70, 2, 130
#: A closed pipe on stdout: 128 + SIGPIPE, what the shell reports for ``yes | head -1``.
EXIT_BROKEN_PIPE = 141
TRACEBACK_VARIABLE = "SUPERNODE_TRACEBACK"


def _param_name(param: Any) -> str:
    """``--tp`` for an option (its longest spelling), ``CLUSTER`` for an argument."""
    opts = [o for o in (*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ()))
            if o.startswith("--")] or list(getattr(param, "opts", ()))
    if getattr(param, "param_type_name", "") == "option" and opts:
        return opts[0]
    name = getattr(param, "metavar", None) or getattr(param, "name", None) or "argument"
    return str(name).strip("[]").upper()


def _help(param: Any) -> str:
    text = " ".join(str(getattr(param, "help", None) or "").split())
    return text.rstrip(".")


def _given(exc: Exception) -> str:
    """``, got 'x'`` from the validation error behind a refused value, if any."""
    cause = exc.__cause__
    errors = getattr(cause, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
        except (IndexError, TypeError):
            return ""
        if "input" in first:
            return f", got {first['input']!r}"
    return ""


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


def _command_for(root: Any, args: Any) -> Any:
    """The (sub)command ``args`` name, walking the group tree from ``root``."""
    command = root
    for token in args or ():
        commands = getattr(command, "commands", None)
        if not commands or token not in commands:
            break
        command = commands[token]
    return command


def usage_error(exc: Exception, root: Any = None, args: Any = None) -> tuple[str, str]:
    """``(where, message)`` of a click/typer usage error, for one ``error:`` line
    (``root`` and ``args`` find the option's help when the error carries no context)."""
    param = getattr(exc, "param", None)
    message = str(getattr(exc, "message", "") or exc).strip().rstrip(".")
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, click_exceptions.MissingParameter) and param is not None:
        return _param_name(param), "required" + _about(param)
    if isinstance(exc, click_exceptions.BadParameter) and param is not None:
        return _param_name(param), f"{_lower_first(message)}{_given(exc)}{_about(param)}"
    if isinstance(exc, click_exceptions.NoSuchOption):
        close = sorted(getattr(exc, "possibilities", None) or ())
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        return exc.option_name, f"no such option{hint} (see --help for the options)"
    if isinstance(exc, click_exceptions.BadOptionUsage):
        command = ctx.command if ctx is not None else _command_for(root, args)
        param = _find_param(command, exc.option_name)
        text = "needs a value" if "requires an argument" in message else \
            "takes no value (it is a flag)" if "does not take a value" in message else \
            _lower_first(message)
        return exc.option_name, text + (_about(param) if param is not None else "")
    where = ctx.command_path if ctx is not None else "supernode"
    if message.startswith("No such command") and ctx is not None:
        command = ctx.command
        commands = sorted(command.list_commands(ctx) if hasattr(command, "list_commands")
                          else getattr(command, "commands", {}) or {})
        wanted = message.split("'", 1)[-1].split("'", 1)[0]
        close = difflib.get_close_matches(wanted, commands, n=2)
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        return where, f"no such command {wanted!r}{hint} (commands: {', '.join(commands)})"
    return where, _lower_first(message)


def _about(param: Any) -> str:
    """`` (the option's help)``: what the option is, so the line says what is allowed."""
    what = _help(param)
    return f" ({what})" if what else ""


def _find_param(command: Any, option: str) -> Any:
    for param in getattr(command, "params", ()):
        if option in (*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ())):
            return param
    return None


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
