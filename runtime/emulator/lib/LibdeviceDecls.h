//===- LibdeviceDecls.h - C declarations of the host libdevice functions ---===//
//
// Turns a row of la/emulator/Libdevice.def into C: the types of its type words and its parameter list with
// names (a0, a1, a2), so that Libdevice.cpp can define every function and Symbols.cpp take their addresses
// from the same rows. Declares every function of the .def.
//
//===----------------------------------------------------------------------===//
#ifndef LA_EMULATOR_LIB_LIBDEVICEDECLS_H
#define LA_EMULATOR_LIB_LIBDEVICEDECLS_H

#include <cstdint>

#define LA_EMU_CTYPE_VOID void
#define LA_EMU_CTYPE_F32 float
#define LA_EMU_CTYPE_F64 double
#define LA_EMU_CTYPE_I32 int32_t
#define LA_EMU_CTYPE_PTR void *
#define LA_EMU_CTYPE(WORD) LA_EMU_CTYPE_##WORD

// The parameter list and the argument list of a row, chosen by its number of parameters (1 to 3).
#define LA_EMU_PARAMS_1(A) LA_EMU_CTYPE(A) a0
#define LA_EMU_PARAMS_2(A, B) LA_EMU_CTYPE(A) a0, LA_EMU_CTYPE(B) a1
#define LA_EMU_PARAMS_3(A, B, C) LA_EMU_CTYPE(A) a0, LA_EMU_CTYPE(B) a1, LA_EMU_CTYPE(C) a2
#define LA_EMU_ARGS_1(A) a0
#define LA_EMU_ARGS_2(A, B) a0, a1
#define LA_EMU_ARGS_3(A, B, C) a0, a1, a2
#define LA_EMU_ARITY(...) LA_EMU_ARITY_IMPL(__VA_ARGS__, 3, 2, 1, )
#define LA_EMU_ARITY_IMPL(A, B, C, N, ...) N
#define LA_EMU_CONCAT(X, Y) LA_EMU_CONCAT_IMPL(X, Y)
#define LA_EMU_CONCAT_IMPL(X, Y) X##Y
#define LA_EMU_PARAMS(...) LA_EMU_CONCAT(LA_EMU_PARAMS_, LA_EMU_ARITY(__VA_ARGS__))(__VA_ARGS__)
#define LA_EMU_ARGS(...) LA_EMU_CONCAT(LA_EMU_ARGS_, LA_EMU_ARITY(__VA_ARGS__))(__VA_ARGS__)

extern "C" {
#define LA_EMU_LIBDEVICE(NAME, HOST, RESULT, ...) LA_EMU_CTYPE(RESULT) NAME(LA_EMU_PARAMS(__VA_ARGS__));
#include "la/emulator/Libdevice.def"
}

#endif // LA_EMULATOR_LIB_LIBDEVICEDECLS_H
