# lit configuration of the la test suite: FileCheck tests of the dialect, passes and kernels.
import os
import shutil

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "LA"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.la_obj_root, "tests")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "unit", "numerics", "runtime", "Inputs"]

# ASan reserves terabytes of address space for its shadow: tests that cap the address space (ulimit -v) cannot
# run under it.
if "address" in getattr(config, "la_sanitizer", ""):
    config.available_features.add("asan")

config.substitutions.append(("%kernels", os.path.join(config.la_src_root, "kernels")))
# scripts/ run from the source tree against the build tree's tools; scripts/profile links with clang-22.
config.substitutions.append(("%la_src", config.la_src_root))
config.substitutions.append(("%la_obj", config.la_obj_root))
if shutil.which("clang-22"):
    config.available_features.add("clang-22")

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tool_dirs = [config.la_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions([ToolSubst("la-opt", unresolved="fatal"), ToolSubst("lac", unresolved="fatal"),
                                    ToolSubst("mlir-opt", unresolved="fatal")], tool_dirs)
# The CUDA toolkit's assembler checks the PTX of the CUDA target (scripts/setup documents where it comes from).
cuda_bin = os.environ.get("LA_CUDA_BIN", "/usr/local/cuda/bin")
llvm_config.add_tool_substitutions([ToolSubst("ptxas", unresolved="fatal")], [cuda_bin] + tool_dirs)
# cuobjdump shows the SASS ptxas made (cuobjdump -sass runs nvdisasm, so its folder goes on PATH too); the
# toolkit here has neither, scripts/setup unpacks both from PyPI into .tools/cuda/bin.
cuda_tools = os.environ.get("LA_CUDA_TOOLS", os.path.join(config.la_src_root, ".tools", "cuda", "bin"))
llvm_config.with_environment("PATH", cuda_tools, append_path=True)
llvm_config.add_tool_substitutions([ToolSubst("cuobjdump", unresolved="fatal")], [cuda_tools])
# Folders for scripts that run the tools themselves (tests/gpu/Inputs/ptxas_report.py).
config.substitutions.append(("%la_bin", config.la_tools_dir))
config.substitutions.append(("%cuda_bin", cuda_bin))
config.substitutions.append(("%cuda_include", os.path.join(os.path.dirname(cuda_bin), "include")))
config.substitutions.append(("%cuda_tools", cuda_tools))
