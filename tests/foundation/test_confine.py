"""The one confinement function on its own: real paths against bases given as real paths, through symlinks,
or not normalised; symlinks out of a base and prefix-sharing siblings stay outside."""
import os

import pytest

from agentserver.paths import OutsideRoots, confine, within_any


@pytest.fixture
def tree(tmp_path):
    real = tmp_path.resolve()
    (real / "root" / "sub").mkdir(parents=True)
    (real / "rootish").mkdir()
    (real / "outside").mkdir()
    os.symlink(real / "root", real / "link-to-root")
    os.symlink(real / "outside", real / "root" / "escape")
    return real


def test_a_path_inside_a_real_base_is_its_real_path(tree):
    assert confine(str(tree / "root" / "sub"), [str(tree / "root")]) == str(tree / "root" / "sub")
    assert confine(str(tree / "root"), [str(tree / "root")]) == str(tree / "root")


def test_a_base_given_through_a_symlink_or_unnormalised_still_admits_its_tree(tree):
    assert confine(str(tree / "root" / "sub"), [str(tree / "link-to-root")]) == str(tree / "root" / "sub")
    assert confine(str(tree / "root" / "sub"), [str(tree / "root") + "/./"]) == str(tree / "root" / "sub")
    assert confine(str(tree / "link-to-root" / "sub"), [str(tree / "root")]) == str(tree / "root" / "sub")


def test_a_symlink_out_of_the_base_and_a_sibling_sharing_its_prefix_are_outside(tree):
    with pytest.raises(OutsideRoots):
        confine(str(tree / "root" / "escape"), [str(tree / "root")])
    with pytest.raises(OutsideRoots):
        confine(str(tree / "rootish"), [str(tree / "root")])
    with pytest.raises(OutsideRoots):
        confine(str(tree / "root" / ".." / "outside"), [str(tree / "root")])
    assert not within_any(str(tree / "root" / "escape" ), [str(tree / "root"), str(tree / "link-to-root")])


def test_the_second_base_can_be_the_one_that_admits(tree):
    bases = [str(tree / "rootish"), str(tree / "root")]
    assert confine(str(tree / "root" / "sub"), bases) == str(tree / "root" / "sub")
    assert within_any(str(tree / "rootish"), bases)
