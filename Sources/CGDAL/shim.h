#ifndef TRAIL_CGDAL_SHIM_H
#define TRAIL_CGDAL_SHIM_H
#include <gdal.h>
#include <ogr_srs_api.h>
#include <cpl_conv.h>
#include <cpl_error.h>
#include <cpl_string.h>
#include <gdal_alg.h>
#include <gdal_utils.h>
#include <ogr_api.h>
#endif
