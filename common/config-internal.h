/* Helpers shared by the files of the configuration module, not by its users. */
#pragma once

#include <libconfig.h>

#include "config.h"

/* The loader of config.c, for the loaders of the other files. */
typedef struct Loader Loader;
/* Records "FILE:LINE: message" for the setting s; 0, or -ENOMEM. */
int config_loader_error(Loader *l, const config_setting_t *s, const char *fmt, ...) _printf_(3, 4);
const char *config_loader_type_name(const config_setting_t *s);

/* config-resources.c: worker.resources and driver.executor_resources.  On
 * success replace *v; on errors in the file record them and leave *v. */
int config_load_resources(Loader *l, const ConfigKey *k, const config_setting_t *s, char ***v);
int config_load_amounts(Loader *l, const ConfigKey *k, const config_setting_t *s, char ***v);
int config_format_resources(char *const *l, char **ret);
int config_format_amounts(char *const *l, char **ret);

/* NULL-safe; returns NULL. */
char **config_strv_free(char **l);
size_t config_strv_length(char *const *l);

/* s as a libconfig string literal: in double quotes, with \" \\ \n \t \r and
 * \xNN escapes, so that a message shows exactly what was read. */
int config_quote(const char *s, char **ret);
