#ifndef TRAIL_CGDAL_SHIM_H
#define TRAIL_CGDAL_SHIM_H
#include <gdal.h>
#include <ogr_srs_api.h>
#include <cpl_conv.h>
#include <cpl_error.h>
#endif
