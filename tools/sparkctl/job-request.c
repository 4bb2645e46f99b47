/* See job-request.h. */
#include <inttypes.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "error-buf.h"
#include "fileio.h"
#include "job-request.h"
#include "sha256.h"
#include "template.h"

int split_lines(char *data, size_t size, ProtobufCBinaryData **ret, size_t *ret_n) {
        _cleanup_free_ ProtobufCBinaryData *lines = NULL;
        size_t n = 0, k = 0, start = 0;

        for (size_t i = 0; i < size; i++)
                if (data[i] == '\n')
                        n++;
        if (size > 0 && data[size - 1] != '\n')
                n++;
        if (n > INT32_MAX)
                return -E2BIG;
        lines = calloc(n + 1, sizeof(*lines));
        if (!lines)
                return -ENOMEM;
        for (size_t i = 0; i <= size && k < n; i++)
                if (i == size || data[i] == '\n') {
                        lines[k++] = (ProtobufCBinaryData) { .len = i - start, .data = (uint8_t *) data + start };
                        start = i + 1;
                }
        *ret = TAKE_PTR(lines);
        *ret_n = n;
        return 0;
}

static void request_id_generate(char buf[static 33]) {
        uint8_t r[16];

        if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t) sizeof(r)) {
                /* no entropy yet: unique enough for one client's resends */
                uint64_t a = (uint64_t) time(NULL) ^ ((uint64_t) getpid() << 32), b = (uint64_t) clock();
                memcpy(r, &a, 8);
                memcpy(r + 8, &b, 8);
        }
        for (size_t i = 0; i < sizeof(r); i++)
                sprintf(buf + 2 * i, "%02x", r[i]);
}

static int build_commands(const Args *a, JobRequest *j, char *err, size_t size) {
        size_t n = a->inputs_path ? j->msg.n_inputs : (size_t) a->count;
        bool append = a->inputs_path && !template_has_placeholders(a->command_template);
        const char *arg = a->arg ?: "";
        int r;

        j->commands = calloc(n + 1, sizeof(char *));
        if (n > 0 && !j->inputs)
                j->inputs = calloc(n + 1, sizeof(*j->inputs));
        if (!j->commands || (n > 0 && !j->inputs))
                return error_buf_set(err, size, -ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
                const void *in = a->inputs_path ? (const void *) j->inputs[i].data : (const void *) arg;
                size_t len = a->inputs_path ? j->inputs[i].len : strlen(arg);

                r = template_expand(a->command_template, append, in, len, (int64_t) i, &j->commands[i]);
                if (r == -EINVAL)
                        return error_buf_set(err, size, r,
                                             "line %zu of %s holds a NUL byte, which a command line cannot",
                                             i + 1, a->inputs_path);
                if (r < 0)
                        return error_buf_set(err, size, r, "out of memory");
                j->n_commands++;
                j->inputs[i] = (ProtobufCBinaryData) { .len = strlen(j->commands[i]),
                                                       .data = (uint8_t *) j->commands[i] };
        }
        j->msg.n_inputs = n;
        j->msg.inputs = j->inputs;
        j->msg.kind = SPARK__TASK_KIND__TASK_COMMAND;
        j->msg.command = (char *) a->command_template;
        return 0;
}

static int build_function(const Args *a, JobRequest *j, char *err, size_t size) {
        static const uint8_t elf_magic[4] = { 0x7f, 'E', 'L', 'F' };
        const char *symbol;
        char *data;
        int r;

        r = function_spec_split(a->function, &j->library_path, &symbol);
        if (r < 0)
                return error_buf_set(err, size, r, "invalid --function '%s'", a->function);
        r = read_full_file(j->library_path, READ_FILE_DASH_STDIN, 0, &data, &j->library_size);
        if (r < 0)
                return error_buf_set(err, size, r, "cannot read %s: %s", j->library_path, strerror(-r));
        j->library = data;
        if (j->library_size < sizeof(elf_magic) || memcmp(data, elf_magic, sizeof(elf_magic)) != 0)
                return error_buf_set(err, size, -EINVAL, "%s is not a shared object (no ELF header)", j->library_path);

        j->msg.kind = SPARK__TASK_KIND__TASK_FUNCTION;
        j->msg.library = (ProtobufCBinaryData) { .len = j->library_size, .data = j->library };
        sha256_hex(j->library, j->library_size, j->library_hash);
        j->msg.symbol = (char *) symbol;
        if (a->count_string) {
                j->msg.count = a->count;
                j->msg.arg = (ProtobufCBinaryData) { .len = a->arg ? strlen(a->arg) : 0,
                                                     .data = (uint8_t *) (a->arg ?: "") };
        } else {
                j->msg.inputs = j->inputs;
                /* n_inputs was set when the file was split */
        }
        return 0;
}

int job_request_build(const Args *a, JobRequest *ret, char *err, size_t size) {
        _cleanup_(job_request_done) JobRequest j = {};
        int r;

        spark__submit_job__init(&j.msg);
        request_id_generate(j.request_id);
        j.msg.request_id = j.request_id;
        j.msg.name = (char *) (a->name ?: "");

        if (a->inputs_path) {
                r = read_full_file(a->inputs_path, READ_FILE_DASH_STDIN, 0, &j.input_data, &j.input_size);
                if (r < 0)
                        return error_buf_set(err, size, r, "cannot read %s: %s",
                                             streq(a->inputs_path, "-") ? "standard input" : a->inputs_path,
                                             strerror(-r));
                r = split_lines(j.input_data, j.input_size, &j.inputs, &j.msg.n_inputs);
                if (r == -E2BIG)
                        return error_buf_set(err, size, r, "%s has more than %d lines", a->inputs_path, INT32_MAX);
                if (r < 0)
                        return error_buf_set(err, size, r, "out of memory");
        }

        r = a->command_template ? build_commands(a, &j, err, size) : build_function(a, &j, err, size);
        if (r < 0)
                return r;
        *ret = j;
        ret->msg.request_id = ret->request_id; /* it pointed into the local copy */
        j = (JobRequest) {};
        return 0;
}

void job_request_done(JobRequest *j) {
        for (size_t i = 0; i < j->n_commands; i++)
                free(j->commands[i]);
        free(j->commands);
        free(j->inputs);
        free(j->input_data);
        free(j->library_path);
        free(j->library);
        *j = (JobRequest) {};
}

int64_t job_request_tasks(const JobRequest *j) {
        return j->msg.n_inputs > 0 ? (int64_t) j->msg.n_inputs : j->msg.count;
}
