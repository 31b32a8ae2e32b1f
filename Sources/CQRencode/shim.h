#ifndef TRAIL_CQRENCODE_SHIM_H
#define TRAIL_CQRENCODE_SHIM_H
#include <qrencode.h>
#endif
