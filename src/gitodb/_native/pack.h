/* The pack functions of gitodb._native (pack.c), added to the module in module.c. */
#ifndef GITODB_NATIVE_PACK_H
#define GITODB_NATIVE_PACK_H
#include <Python.h>

extern PyMethodDef gdc_pack_methods[];

#endif
