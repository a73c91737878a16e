/* Class names of ImageNet-1k, in the order of timm's 1000-class heads. */
#ifndef GMLP_IMAGENET_LABELS_H
#define GMLP_IMAGENET_LABELS_H

extern const char *const gmlp_imagenet_labels[1000];

#endif
