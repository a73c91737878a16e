/* IEEE 754 binary16 ("half") conversions on the host: reading F16 tensors and
 * storing weights as half on the device. */
#ifndef GMLP_HALF_H
#define GMLP_HALF_H

#include <stdint.h>

float gmlp_half_to_float(uint16_t h);

/* Round to nearest, ties to even (what vstore_half_rte does on a device);
 * finite values of magnitude >= 65520 become infinity, NaN stays NaN. */
uint16_t gmlp_float_to_half(float f);

#endif
