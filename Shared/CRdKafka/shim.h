#include <librdkafka/rdkafka.h>
#include <dlfcn.h>
#include <stdint.h>

/* A topic's id (KIP-516): a topic deleted and made again under the same name gets a new one, which offsets
 * alone cannot show once the new log has grown past the old position. DescribeTopics came with librdkafka 2.3;
 * the headers built against may be older (Debian 12's 2.0.2), so its functions are looked up at run time.
 * Returns 0 with the id in *most / *least, ITOUR_RD_KAFKA_NO_TOPIC_IDS when the loaded library has none, or a
 * rd_kafka_resp_err_t (the topic's own error, e.g. unknown topic, or the request's; -1 is one of those). */
#define ITOUR_RD_KAFKA_NO_TOPIC_IDS INT32_MIN
static inline int itour_rd_kafka_topic_id(rd_kafka_t *rk, const char *topic, int timeout_ms,
                                          int64_t *most, int64_t *least) {
    typedef void *(*of_names_t)(const char **, size_t);
    typedef void (*destroy_collection_t)(void *);
    typedef void (*describe_t)(rd_kafka_t *, const void *, const rd_kafka_AdminOptions_t *, rd_kafka_queue_t *);
    typedef const void *(*event_result_t)(rd_kafka_event_t *);
    typedef const void **(*result_topics_t)(const void *, size_t *);
    typedef const rd_kafka_error_t *(*description_error_t)(const void *);
    typedef const void *(*description_id_t)(const void *);
    typedef int64_t (*uuid_bits_t)(const void *);
    /* Looked up on each call (one check every few seconds): no shared state between the consumers' threads. */
    of_names_t of_names = (of_names_t)dlsym(RTLD_DEFAULT, "rd_kafka_TopicCollection_of_topic_names");
    destroy_collection_t destroy_collection = (destroy_collection_t)dlsym(RTLD_DEFAULT, "rd_kafka_TopicCollection_destroy");
    describe_t describe = (describe_t)dlsym(RTLD_DEFAULT, "rd_kafka_DescribeTopics");
    event_result_t event_result = (event_result_t)dlsym(RTLD_DEFAULT, "rd_kafka_event_DescribeTopics_result");
    result_topics_t result_topics = (result_topics_t)dlsym(RTLD_DEFAULT, "rd_kafka_DescribeTopics_result_topics");
    description_error_t description_error = (description_error_t)dlsym(RTLD_DEFAULT, "rd_kafka_TopicDescription_error");
    description_id_t description_id = (description_id_t)dlsym(RTLD_DEFAULT, "rd_kafka_TopicDescription_topic_id");
    uuid_bits_t most_bits = (uuid_bits_t)dlsym(RTLD_DEFAULT, "rd_kafka_Uuid_most_significant_bits");
    uuid_bits_t least_bits = (uuid_bits_t)dlsym(RTLD_DEFAULT, "rd_kafka_Uuid_least_significant_bits");
    if (!of_names || !destroy_collection || !describe || !event_result || !result_topics || !description_error
        || !description_id || !most_bits || !least_bits) return ITOUR_RD_KAFKA_NO_TOPIC_IDS;

    const char *names[1] = { topic };
    void *collection = of_names(names, 1);
    rd_kafka_queue_t *queue = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *options = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_ANY);
    char errstr[256];
    rd_kafka_AdminOptions_set_request_timeout(options, timeout_ms, errstr, sizeof errstr);
    describe(rk, collection, options, queue);
    rd_kafka_event_t *event = rd_kafka_queue_poll(queue, timeout_ms + 1000);
    int result = RD_KAFKA_RESP_ERR__TIMED_OUT;
    if (event) {
        result = rd_kafka_event_error(event);
        const void *described = result == 0 ? event_result(event) : NULL;
        size_t count = 0;
        const void **topics = described ? result_topics(described, &count) : NULL;
        if (result == 0) result = RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC;
        for (size_t i = 0; topics && i < count; i++) {
            const rd_kafka_error_t *error = description_error(topics[i]);
            const void *id = description_id(topics[i]);
            if (error && rd_kafka_error_code(error)) { result = rd_kafka_error_code(error); break; }
            if (!id) break;
            *most = most_bits(id);
            *least = least_bits(id);
            result = 0;
            break;
        }
        rd_kafka_event_destroy(event);
    }
    rd_kafka_AdminOptions_destroy(options);
    rd_kafka_queue_destroy(queue);
    destroy_collection(collection);
    return result;
}
