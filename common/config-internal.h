/* Helpers shared by the files of the configuration module, not by its users. */
#pragma once

#include "config.h"

/* NULL-safe; returns NULL. */
char **config_strv_free(char **l);
size_t config_strv_length(char *const *l);

/* s as a libconfig string literal: in double quotes, with \" \\ \n \t \r and
 * \xNN escapes, so that a message shows exactly what was read. */
int config_quote(const char *s, char **ret);
