#!/usr/bin/env python3
"""Every include points into its own folder or into a folder its CMake target links.

Every target has the repository root on its include path (occ_library, cmake/OccLibrary.cmake),
so the compiler alone would accept a header from a folder the target does not link; this test
closes that gap. It reads the targets from the CMakeLists.txt files of the source folders
(occ_library's LINKS / PRIVATE_LINKS, target_link_libraries), takes the transitive closure of
the occ_* targets each one links, and checks every `#include "folder/.../file.h"` of every
source file in a target's folder against it.
  include_layering_test.py [REPO_ROOT]   exit 0: clean; 1: each bad include on one line
"""
import os
import re
import sys

SOURCE_TOPS = ("injector", "analyzer", "reports", "sqlite", "base", "schema")
LIBRARY = re.compile(r"\b(?:occ_library|add_library|add_executable)\(\s*([\w.-]+)")
LINKS = re.compile(r"\btarget_link_libraries\(\s*([\w.-]+)([^)]*)\)", re.S)
OCC_LIBRARY_CALL = re.compile(r"\bocc_library\(\s*([\w.-]+)([^)]*)\)", re.S)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def read_targets(root):
    """folder -> its target, and every target it declares; target -> the occ_* targets it names."""
    folder_target, folder_all, links = {}, {}, {}
    for top in SOURCE_TOPS:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            if "CMakeLists.txt" not in files:
                continue
            text = open(os.path.join(dirpath, "CMakeLists.txt")).read()
            text = re.sub(r"#[^\n]*", "", text)
            folder = os.path.relpath(dirpath, root)
            names = LIBRARY.findall(text)
            if names:
                # The folder's library: the first library the folder declares (executables and the
                # .so sit beside it and link it).
                folder_target[folder] = names[0]
                folder_all[folder] = set(names)
            for name in names:
                links.setdefault(name, set())
            for name, body in OCC_LIBRARY_CALL.findall(text):
                links.setdefault(name, set()).update(re.findall(r"\bocc_\w+", body))
            for name, body in LINKS.findall(text):
                links.setdefault(name, set()).update(re.findall(r"\bocc_\w+", body))
    return folder_target, folder_all, links


def closure(target, links):
    seen, stack = set(), [target]
    while stack:
        for dep in links.get(stack.pop(), ()):
            if dep not in seen:
                seen.add(dep)
                stack.append(dep)
    return seen


def owner(path, folder_target):
    """The folder (deepest with a target) that holds `path`."""
    folder = os.path.dirname(path)
    while folder and folder not in folder_target:
        folder = os.path.dirname(folder)
    return folder or None


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../.."))
    folder_target, folder_all, links = read_targets(root)
    if not folder_target:
        print(f"include_layering_test: no targets found under {root}")
        return 1
    bad, checked = [], 0
    for folder, target in sorted(folder_target.items()):
        allowed = closure(target, links) | {target}
        for name in sorted(os.listdir(os.path.join(root, folder))):
            if not name.endswith((".h", ".cc")):
                continue
            path = os.path.join(folder, name)
            for include in INCLUDE.findall(open(os.path.join(root, path)).read()):
                if include.split("/")[0] not in SOURCE_TOPS:
                    continue  # generated headers (kTraceSchemaSql.h), tests' own
                checked += 1
                # schema/*.pb.h is generated into the build tree, from schema/.
                included_folder = owner(include, folder_target)
                if included_folder is None:
                    bad.append(f"{path}: includes {include}, which no target's folder holds")
                    continue
                # A folder of several targets (schema/: occ_schema, occ_meta_keys) is reached
                # through any of them.
                if not folder_all[included_folder] & allowed:
                    bad.append(f"{path} ({target}): includes {include} from {included_folder}/, "
                               f"whose targets ({', '.join(sorted(folder_all[included_folder]))}) "
                               f"{target} does not link")
    for line in bad:
        print(line)
    print(f"include_layering_test: {checked} includes in {len(folder_target)} folders, {len(bad)} outside "
          f"what their target links")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
