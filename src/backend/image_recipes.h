/* The recipe files embedded at build time (embed_images.cmake), sorted by
 * name, ending with a NULL name. */
#ifndef ENGI_IMAGE_RECIPES_H
#define ENGI_IMAGE_RECIPES_H

#include <stddef.h>

struct image_recipe_file {
	const char *name;
	const unsigned char *data;
	size_t len;
};

extern const struct image_recipe_file image_recipe_files[];

#endif
