/* stb_image's implementation for fuzz_image, compiled here (instrumented)
 * from the header Debian's libstb is built from; meson.build says which
 * UBSan checks are off for it and why. */
#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>
