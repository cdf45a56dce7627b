"""The sysadmin guard: refuse catastrophic shell commands, warn about what it cannot see.

:func:`check_command` parses a command line with tree-sitter-bash (a real shell grammar)
and walks the tree: every simple command, in pipelines, lists, subshells, groups, loops,
``case`` branches, functions, command and process substitutions and here-documents. Each
word is resolved as the shell would: quoting (``r''m``, ``"rm"``, ``\\rm``), ANSI-C
strings (``$'\\x72\\x6d'``), brace expansion, variables assigned earlier in the same line
(``x=rm; $x -rf /``, ``IFS`` included), and command substitutions whose output can be
worked out from literals (``echo``, ``printf``, ``base64 -d``, ``base32 -d``, ``xxd -r
-p``, ``rev``, ``tr``, ``cat``). It follows ``eval``, ``sh -c``/``bash -c`` (with their
``$0``, ``$1``…), scripts fed to a shell on stdin (pipes, here-documents, here-strings,
``<(...)``, a file written earlier in the line), ``source``, aliases and functions defined
in the line, wrappers (``sudo``, ``env``, ``command``, ``busybox``, ``nohup``,
``timeout``…), ``xargs`` and GNU ``parallel`` (the command they run, with their input when
known), ``find -delete``/``-exec`` (its expression evaluated left to right, so an action
before its tests acts on everything), ``watch``, ``ssh`` and ``at`` command strings,
``read``, ``set --``, ``printf -v``, arrays and the environment a child shell inherits.
What runs later is checked as if it ran now: ``trap`` actions, ``coproc``, hook variables
(``PROMPT_COMMAND``, ``$(...)`` in ``PS0``-``PS4``, ``BASH_ENV``/``ENV``, pagers, editors,
``GIT_SSH_COMMAND``…), crontabs installed with ``crontab``, ``tmux``/``screen``/
``systemd-run``/``script -c``/``flock -c`` commands, and what is written into shell
start-up files and cron tables. Paths are normalised after expansion (``~``, ``~user`` and
``$HOME`` stand for a home, so ``~/..`` is /home and ``~/../..`` is /), relative paths are
also taken from where a ``cd`` earlier in the line went, and symbolic links made earlier
in the line or found on disk are followed, and so are bind mounts (``mount --bind``) and a
container's host volumes (``docker run -v /:/h … rm -rf /h`` is ``rm -rf /``). What the line
makes is what runs: a program copied or linked earlier (``cp /bin/rm /tmp/r; /tmp/r``) is
that program, and a script it wrote (``./x.sh``, ``python3 a.py``) is checked by its text.
Environment variables that stand for options (``GIT_WORK_TREE``, ``GIT_DIR``,
``TAR_OPTIONS``, ``RSYNC_RSH``: ``_ENVIRONMENT_OPTIONS``) are read as those options. Each
resulting command is checked against tables a reader can extend: deleters (``_DELETERS``:
rm, rmdir, unlink, shred, truncate, tar --remove-files, zip -m, rsync
--remove-source-files/--delete, git clean…), partitioning, disk and filesystem tools
(``_DISK_TOOLS``), programs that kill by owner or pattern (``_PROCESS_KILLERS``), files
that act later (``_STARTUP_NAMES``, ``_HOME_FILES_LATER``, ``_HOME_FOLDERS_LATER``),
system trees and the subtrees the machine needs whole (``_SYSTEM_TREES``,
``_SYSTEM_SUBTREES``), critical files and programs (``_CRITICAL_FILES``,
``_ESSENTIAL_PROGRAMS``), interpreters' tree deletions (``_CODE_TREE_DELETERS``,
``_CODE_HOMES``), git settings that run commands (``_GIT_COMMAND_KEYS``), and other ways to
destroy a machine, a home or the workspace. Two faults of tree-sitter-bash 0.25.1 are
worked around here: it splits a word at a backslash-newline (continuations are joined
first, as bash does), and it can crash on ``{`` followed by a four-byte UTF-8 character
(those are parsed as U+FFFD).

Three verdicts (:class:`Verdict`):

* **refuse**: catastrophic (any deleter on ``/``, a system tree or subtree, a home, the
  workspace or what holds it, also through ``find`` whose tests select everything; a
  partitioning, disk or filesystem tool that writes; ``mkfs`` of a device; ``dd``,
  ``ddrescue``, ``sort -o``, ``socat`` or a redirect onto a device; ``zfs destroy`` of a
  dataset; fork bombs; shutdown; ``chmod -R`` on ``/`` or a home (the workspace itself is
  the user's to change), ``chmod 000 /``; ``kill -1``, ``kill 1``, ``killall5``, ``pkill
  -u root`` or of your own user; deleting root's account or password; overwriting,
  emptying or linking over ``/etc/passwd``, moving an essential program away; a library
  call deleting a home or ``/``, or a command run from a list of literal words, in a
  ``python -c``/``node -e``/``perl -e``/``ruby -e`` one-liner…), and what the guard cannot see
  through where it matters most: a line it cannot parse, nesting too deep, oversized
  expansions, and a script it cannot read that comes out of a decoder (base64, xxd,
  openssl, gzip…) into a shell or ``eval``. Fail closed.
* **warn**: the guard cannot see what would run, but nothing says it is obfuscated: a
  command name taken from the environment or from a program's output (``$CMD``,
  ``$(cat file)``), a glob as the command name, a download piped into a shell (``curl |
  sh``), ``eval``/``sh -c`` of a variable or a program's output, ``xargs`` feeding
  unknown arguments to a recursive delete, a recursive delete of a path built from a
  variable the line does not set (refused when the path with that variable empty would
  be a catastrophe: ``rm -rf "$DIR"/``), ``find`` deleting under a system tree with a
  filter, ``python -c``/``perl -e`` one-liners that delete files or run commands, writes to
  shell start-up files and cron tables (``>> ~/.bashrc``, ``tee -a ~/.profile``, ``cp x
  ~/.bashrc``) and other files that act later (``~/.ssh/authorized_keys``,
  ``~/.local/bin``, ``~/.config/autostart``), ``git config`` of a setting git runs unasked
  (``core.sshCommand``), ``BASH_ENV`` naming a file it cannot read, a link or bind mount
  made to a home or ``/``, a container given a writable volume of one, one-liners that
  compute what they call (``getattr``, ``obj['rm' + 'Sync']``), ``crontab -r`` and ``git
  push --force``. The approval dialog shows the warning; the user decides.
* **allow**: nothing of the above.

It is a safety net for an assistant that asks before every command, not a sandbox: it
prefers a false refusal to a missed catastrophe, and never raises.

The package, layer by layer (each module's docstring says why it is apart):

* :mod:`.model`: verdicts, the refusal, expanded words, streams, what a line defined.
* :mod:`.parse`: tree-sitter-bash and the workarounds for its faults.
* :mod:`.paths`, :mod:`.options`: what a path leads to; how options are read.
* the walker, one class a layer: :mod:`.words` (expansion), :mod:`.evaluate` (what a
  command prints), :mod:`.places` (``cd``, links, copies and mounts), :mod:`.scripts`
  (scripts run now or later), :mod:`.interpreters` (code in other languages),
  :mod:`.follow` (the followers of deferred execution, a table by command name),
  :mod:`.walk` (the syntax tree).
* the rules: :mod:`.rules` (the verdict chain) and its tables in :mod:`.deleters`,
  :mod:`.git`, :mod:`.machine`, :mod:`.writes`; with :mod:`.wrappers`, :mod:`.code`,
  :mod:`.find` and :mod:`.containers` for wrappers, interpreter one-liners, find's
  expression, containers and mounts.

Names with a leading underscore belong to the package; its public face is this module.
"""

from typing import TYPE_CHECKING

from zcoder.base.lazy import face

if TYPE_CHECKING:
    from zcoder.tools.guard.check import check_command, classify_command
    from zcoder.tools.guard.model import GuardVerdict, Verdict
    from zcoder.tools.guard.readonly import read_only_refusal

__getattr__, __dir__, __all__ = face(__name__, __file__)
