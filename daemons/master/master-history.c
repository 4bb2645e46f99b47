/* See master-history.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alloc-util.h"
#include "macro.h"
#include "master-history.h"

static void list_drop_oldest(HistoryList *l, size_t max) {
        size_t drop;

        if (l->n <= max)
                return;
        drop = l->n - max;
        for (size_t i = 0; i < drop; i++)
                free(l->items[i].data);
        memmove(l->items, l->items + drop, (l->n - drop) * sizeof(*l->items));
        l->n -= drop;
}

static int list_add(HistoryList *l, const ProtobufCMessage *msg, size_t max) {
        size_t len = protobuf_c_message_get_packed_size(msg);
        uint8_t *data;

        if (max == 0)
                return 0;
        if (GREEDY_REALLOC(l->items, l->allocated, l->n + 1) < 0)
                return -ENOMEM;
        data = malloc(len ? len : 1);
        if (!data)
                return -ENOMEM;
        protobuf_c_message_pack(msg, data);
        l->items[l->n++] = (ProtobufCBinaryData) { .len = len, .data = data };
        list_drop_oldest(l, max);
        return 0;
}

int history_add_app(History *h, const Spark__AppInfo *ai, size_t max) {
        return list_add(&h->apps, &ai->base, max);
}

int history_add_worker(History *h, const Spark__WorkerInfo *wi, size_t max) {
        return list_add(&h->workers, &wi->base, max);
}

void history_trim(History *h, size_t max_apps, size_t max_workers) {
        list_drop_oldest(&h->apps, max_apps);
        list_drop_oldest(&h->workers, max_workers);
}

static void list_done(HistoryList *l) {
        for (size_t i = 0; i < l->n; i++)
                free(l->items[i].data);
        free(l->items);
        l->items = NULL;
        l->n = l->allocated = 0;
}

void history_done(History *h) {
        list_done(&h->apps);
        list_done(&h->workers);
}

static int list_unpack(const HistoryList *l, const ProtobufCMessageDescriptor *d, ProtobufCMessage ***ret,
                       size_t *ret_n) {
        ProtobufCMessage **v = calloc(l->n + 1, sizeof(*v));
        size_t n = 0;

        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < l->n; i++) {
                ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, l->items[i].len, l->items[i].data);
                if (m)
                        v[n++] = m;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

int history_unpack_apps(const History *h, Spark__AppInfo ***ret, size_t *ret_n) {
        return list_unpack(&h->apps, &spark__app_info__descriptor, (ProtobufCMessage ***) ret, ret_n);
}

int history_unpack_workers(const History *h, Spark__WorkerInfo ***ret, size_t *ret_n) {
        return list_unpack(&h->workers, &spark__worker_info__descriptor, (ProtobufCMessage ***) ret, ret_n);
}

void history_apps_free(Spark__AppInfo **v, size_t n) {
        for (size_t i = 0; v && i < n; i++)
                spark__app_info__free_unpacked(v[i], NULL);
        free(v);
}

void history_workers_free(Spark__WorkerInfo **v, size_t n) {
        for (size_t i = 0; v && i < n; i++)
                spark__worker_info__free_unpacked(v[i], NULL);
        free(v);
}

int history_app_usage(History *h, const char *app_id, uint64_t cpu_usage_ns, uint64_t memory_peak_bytes,
                      Spark__AppInfo **ret) {
        Spark__AppInfo *ai = NULL;
        size_t i, len;
        uint8_t *data;

        /* newest first: a late report is about an app that just ended */
        for (i = h->apps.n; i > 0; i--) {
                ProtobufCBinaryData *b = &h->apps.items[i - 1];

                ai = spark__app_info__unpack(NULL, b->len, b->data);
                if (ai && streq_ptr(ai->app_id, app_id))
                        break;
                spark__app_info__free_unpacked(ai, NULL);
                ai = NULL;
        }
        if (!ai || ai->executors_ending <= 0) {
                spark__app_info__free_unpacked(ai, NULL);
                return 0;
        }
        ai->cpu_usage_ns += cpu_usage_ns;
        ai->memory_peak_bytes += memory_peak_bytes;
        ai->executors_ending--;
        len = spark__app_info__get_packed_size(ai);
        data = malloc(len ? len : 1);
        if (!data) {
                spark__app_info__free_unpacked(ai, NULL);
                return -ENOMEM;
        }
        spark__app_info__pack(ai, data);
        free(h->apps.items[i - 1].data);
        h->apps.items[i - 1] = (ProtobufCBinaryData) { .len = len, .data = data };
        if (ai->executors_ending > 0) {
                spark__app_info__free_unpacked(ai, NULL);
                return 0;
        }
        *ret = ai;
        return 1;
}
