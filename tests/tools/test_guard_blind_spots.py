"""The guard's blind spots of issue 18, class by class: each table holds several spellings
of one way to destroy a machine, a home or the workspace that the guard used to allow,
and the ordinary commands of the same shape it must keep allowing."""

from __future__ import annotations

import pytest

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


@pytest.mark.parametrize("command", CLIMBING_PATHS)
def test_paths_climbing_out_of_a_home_are_normalised(command: str) -> None:
    assert refused(command), command


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
    "git -C ~ clean -xfd",
    "git --work-tree=/ clean -fdx",
    "git -C /home/alice clean -ffdx",
    "git -C ~/.. clean -fdx",
    "git clean -fdx ~",
]


@pytest.mark.parametrize("command", DELETERS)
def test_every_deleter_is_checked_like_rm(command: str) -> None:
    assert refused(command), command


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
]


@pytest.mark.parametrize("command", DISK_TOOLS)
def test_every_partitioning_and_disk_tool_is_refused_when_it_writes(command: str) -> None:
    assert refused(command), command


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


@pytest.mark.parametrize("command", KILL_EVERYTHING)
def test_killing_everything_is_refused(command: str) -> None:
    assert refused(command), command


# Ordinary commands of the same shapes, inside the workspace or read-only.
ORDINARY_OF_THE_SAME_SHAPE = [
    "chmod -R 755 .",
    "chmod -R u+w .",
    "chown -R $USER .",
    "chown -R $(id -u):$(id -g) .",
    "chgrp -R staff .",
    "chmod -R a+rX ./*",
    "chmod -R go-w $PWD",
    "rm -rf ~/.cache/thumbnails",
    'rm -rf "$HOME/.cache/pip"',
    "tar --remove-files -czf logs.tgz logs/",
    "rsync -a --remove-source-files out/ /srv/archive/",
    "zip -m logs.zip app.log.1 app.log.2",
    "git -C ~/dotfiles status",
    "git -C /srv/app clean -n",
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
]


@pytest.mark.parametrize("command", ORDINARY_OF_THE_SAME_SHAPE)
def test_ordinary_commands_of_the_same_shapes_are_allowed(command: str) -> None:
    verdict = check_command(command, WORKSPACE)
    assert verdict.verdict is Verdict.ALLOW, verdict


def test_the_workspace_may_be_changed_but_not_what_holds_it() -> None:
    assert allowed("chmod -R 755 .") and allowed(f"chown -R me {WORKSPACE}")
    assert refused("chmod -R 755 ..") and refused("chown -R me /srv/work")
    assert refused("rm -rf .")  # deleting it is still refused
