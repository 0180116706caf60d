// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * rnic-pci: the RNIC card as a QEMU PCIe device whose NIC is an rnic-sim (docs/ARCHITECTURE.md
 * "Host link", card host). Built into Debian's QEMU by sim/qemu/build.sh; never part of the card.
 *
 * BAR0 accesses become host-link MMIO messages, the NIC's DMA becomes pci_dma_read/write on guest
 * memory (through the IOMMU when the machine has one), its MSI-X messages msix_notify. The card's
 * IDs, BAR0 and the MSI-X BAR are the bitstream's (bitstreams/common/vivado.tcl, spec MSIX_*).
 *
 * Threads: a vCPU never blocks on the socket holding the BQL. Its writes and read requests go to
 * an out-queue; a read then waits on a condition with the BQL released. The link thread owns the
 * socket: it sends the queue, and under the BQL serves the NIC's DMA, interrupts and read answers.
 * rnic-sim stops its clock until a DMA read is answered, so that path never waits on a vCPU.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/main-loop.h"
#include "qemu/event_notifier.h"
#include "qemu/thread.h"
#include "qemu/module.h"
#include "hw/pci/pci.h"
#include "hw/pci/pcie.h"
#include "hw/pci/msix.h"
#include "hw/qdev-properties.h"
#include "qom/object.h"
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "rnic_spec.h"

#define TYPE_RNIC_PCI "rnic-pci"
OBJECT_DECLARE_SIMPLE_TYPE(RnicPciState, RNIC_PCI)

#define RNIC_PCI_READS 16 /* reads in flight: one per vCPU */

struct RnicPciState {
    PCIDevice parent_obj;
    MemoryRegion bar0;
    MemoryRegion msix; /* the MSI-X table and PBA: their own BAR, as on the card (spec MSIX_*) */
    char *socket_path;

    int fd;
    QemuThread thread;
    EventNotifier kick;      /* the out-queue has bytes, or the device is going away */
    QemuMutex qlock;         /* out */
    GByteArray *out;
    bool stop;

    /* under the BQL */
    QemuCond answered;
    bool dead;               /* the NIC went away: reads return all ones, as a lost card's */
    uint32_t next_tag;
    struct {
        uint32_t tag;
        bool busy, done;
        uint32_t value;
    } rd[RNIC_PCI_READS];
};

static void queue_msg(RnicPciState *s, uint32_t type, uint64_t addr, uint64_t value, uint32_t tag,
                      uint32_t status, const uint8_t *p, uint32_t len)
{
    uint8_t h[RNIC_LINK_HDR_SIZE] = { 0 };

    RNIC_LINK_HDR_TYPE_SET(h, type);
    RNIC_LINK_HDR_LEN_SET(h, len);
    RNIC_LINK_HDR_ADDR_SET(h, addr);
    RNIC_LINK_HDR_VALUE_SET(h, value);
    RNIC_LINK_HDR_TAG_SET(h, tag);
    RNIC_LINK_HDR_STATUS_SET(h, status);
    qemu_mutex_lock(&s->qlock);
    g_byte_array_append(s->out, h, sizeof(h));
    if (len) {
        g_byte_array_append(s->out, p, len);
    }
    qemu_mutex_unlock(&s->qlock);
    event_notifier_set(&s->kick);
}

static uint64_t bar0_read(void *opaque, hwaddr addr, unsigned size)
{
    RnicPciState *s = opaque;
    uint32_t tag = ++s->next_tag, slot = tag % RNIC_PCI_READS;
    uint32_t v;

    while (s->rd[slot].busy && !s->dead) {
        qemu_cond_wait_iothread(&s->answered);
    }
    if (s->dead) {
        return ~0u;
    }
    s->rd[slot].busy = true;
    s->rd[slot].done = false;
    s->rd[slot].tag = tag;
    queue_msg(s, RNIC_LINK_MSG_MMIO_RD, addr, 0, tag, 0, NULL, 0);
    while (!s->rd[slot].done && !s->dead) {
        qemu_cond_wait_iothread(&s->answered);
    }
    v = s->dead ? ~0u : s->rd[slot].value;
    s->rd[slot].busy = false;
    qemu_cond_broadcast(&s->answered);
    return v;
}

static void bar0_write(void *opaque, hwaddr addr, uint64_t val, unsigned size)
{
    RnicPciState *s = opaque;

    if (!s->dead) {
        queue_msg(s, RNIC_LINK_MSG_MMIO_WR, addr, (uint32_t)val, 0, 0, NULL, 0);
    }
}

static const MemoryRegionOps bar0_ops = {
    .read = bar0_read,
    .write = bar0_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 4, .max_access_size = 8 },
    .impl = { .min_access_size = 4, .max_access_size = 4 }, /* a 64-bit access: two, low first */
};

/* One message from the NIC, under the BQL. DMA writes land in order, the last 8 bytes last
 * (the owner bytes of CQEs, EQEs and command completions sit there). */
static void handle(RnicPciState *s, const uint8_t *h, const uint8_t *p)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    uint32_t type = RNIC_LINK_HDR_TYPE_GET(h), len = RNIC_LINK_HDR_LEN_GET(h);
    uint32_t tag = RNIC_LINK_HDR_TAG_GET(h);
    uint64_t addr = RNIC_LINK_HDR_ADDR_GET(h), value = RNIC_LINK_HDR_VALUE_GET(h);

    switch (type) {
    case RNIC_LINK_MSG_MMIO_RD_RESP: {
        uint32_t slot = tag % RNIC_PCI_READS;

        if (s->rd[slot].busy && s->rd[slot].tag == tag) {
            s->rd[slot].value = (uint32_t)value;
            s->rd[slot].done = true;
            qemu_cond_broadcast(&s->answered);
        }
        break;
    }
    case RNIC_LINK_MSG_DMA_RD: {
        uint32_t n = MIN(value, RNIC_LINK_MAX_PAYLOAD);
        g_autofree uint8_t *buf = g_malloc0(n);
        bool bad = pci_dma_read(pdev, addr, buf, n) != MEMTX_OK;

        /* refused (bus mastering off, outside the IOMMU's mappings): the NIC sees an error */
        queue_msg(s, RNIC_LINK_MSG_DMA_RD_RESP, addr, 0, tag, bad, bad ? NULL : buf, bad ? 0 : n);
        break;
    }
    case RNIC_LINK_MSG_DMA_WR: {
        uint32_t head = len > 8 ? len - 8 : 0;
        /* a write refused is lost, as a posted write on PCIe is */
        if (head) {
            pci_dma_write(pdev, addr, p, head);
        }
        smp_wmb();
        pci_dma_write(pdev, addr + head, p + head, len - head);
        break;
    }
    case RNIC_LINK_MSG_IRQ:
        if (value < RNIC_NUM_CTX && msix_enabled(pdev)) {
            msix_notify(pdev, value);
        }
        break;
    case RNIC_LINK_MSG_FENCE:
        /* every write before it is applied: they are, in order, as they come */
        queue_msg(s, RNIC_LINK_MSG_FENCE_ACK, 0, 0, tag, 0, NULL, 0);
        break;
    default:
        break;
    }
}

static void link_lost(RnicPciState *s)
{
    qemu_mutex_lock_iothread();
    if (!s->dead) {
        s->dead = true;
        qemu_cond_broadcast(&s->answered);
        if (!s->stop) {
            error_report("rnic-pci: the NIC (%s) went away", s->socket_path);
        }
    }
    qemu_mutex_unlock_iothread();
}

static void *link_thread(void *opaque)
{
    RnicPciState *s = opaque;
    g_autoptr(GByteArray) in = g_byte_array_new();
    uint8_t buf[65536];

    while (!qatomic_read(&s->stop)) {
        struct pollfd pf[2] = {
            { .fd = s->fd, .events = POLLIN },
            { .fd = event_notifier_get_fd(&s->kick), .events = POLLIN },
        };
        size_t off = 0;
        ssize_t n;

        qemu_mutex_lock(&s->qlock);
        if (s->out->len) {
            pf[0].events |= POLLOUT;
        }
        qemu_mutex_unlock(&s->qlock);
        if (poll(pf, 2, -1) < 0 && errno != EINTR) {
            break;
        }
        if (pf[1].revents) {
            event_notifier_test_and_clear(&s->kick);
        }
        if (pf[0].revents & POLLOUT) {
            qemu_mutex_lock(&s->qlock);
            n = send(s->fd, s->out->data, s->out->len, MSG_DONTWAIT | MSG_NOSIGNAL);
            if (n > 0) {
                g_byte_array_remove_range(s->out, 0, n);
            }
            qemu_mutex_unlock(&s->qlock);
            if (n < 0 && errno != EAGAIN && errno != EINTR) {
                break;
            }
        }
        if (!(pf[0].revents & (POLLIN | POLLHUP | POLLERR))) {
            continue;
        }
        n = recv(s->fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
            break;
        }
        if (n < 0) {
            continue;
        }
        g_byte_array_append(in, buf, n);
        qemu_mutex_lock_iothread();
        while (in->len - off >= RNIC_LINK_HDR_SIZE) {
            uint32_t len = RNIC_LINK_HDR_LEN_GET(in->data + off);

            if (len > RNIC_LINK_MAX_PAYLOAD || in->len - off < RNIC_LINK_HDR_SIZE + len) {
                break;
            }
            handle(s, in->data + off, in->data + off + RNIC_LINK_HDR_SIZE);
            off += RNIC_LINK_HDR_SIZE + len;
        }
        qemu_mutex_unlock_iothread();
        g_byte_array_remove_range(in, 0, off);
        if (in->len >= RNIC_LINK_HDR_SIZE && RNIC_LINK_HDR_LEN_GET(in->data) > RNIC_LINK_MAX_PAYLOAD) {
            break; /* not the link's framing: stop rather than guess */
        }
    }
    link_lost(s);
    return NULL;
}

/* Connect and say HELLO (blocking: at realize, before the guest can touch the device). */
static bool link_open(RnicPciState *s, Error **errp)
{
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    uint8_t h[RNIC_LINK_HDR_SIZE] = { 0 };
    struct timeval tv = { .tv_sec = 60 };
    size_t got = 0;

    if (!s->socket_path || strlen(s->socket_path) >= sizeof(a.sun_path)) {
        error_setg(errp, "rnic-pci: socket=PATH of an rnic-sim --card-host is required");
        return false;
    }
    strcpy(a.sun_path, s->socket_path);
    s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s->fd < 0 || connect(s->fd, (struct sockaddr *)&a, sizeof(a))) {
        error_setg_errno(errp, errno, "rnic-pci: cannot connect to %s", s->socket_path);
        return false;
    }
    setsockopt(s->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    RNIC_LINK_HDR_TYPE_SET(h, RNIC_LINK_MSG_HELLO);
    RNIC_LINK_HDR_VALUE_SET(h, RNIC_LINK_VERSION);
    if (send(s->fd, h, sizeof(h), MSG_NOSIGNAL) != sizeof(h)) {
        error_setg_errno(errp, errno, "rnic-pci: %s", s->socket_path);
        return false;
    }
    while (got < sizeof(h)) {
        ssize_t n = recv(s->fd, h + got, sizeof(h) - got, 0);

        if (n <= 0) {
            error_setg(errp, "rnic-pci: %s closed the link (another host holds it?)", s->socket_path);
            return false;
        }
        got += n;
    }
    if (RNIC_LINK_HDR_TYPE_GET(h) != RNIC_LINK_MSG_HELLO_ACK || RNIC_LINK_HDR_STATUS_GET(h)) {
        error_setg(errp, "rnic-pci: %s speaks another link version", s->socket_path);
        return false;
    }
    return true;
}

static void rnic_pci_realize(PCIDevice *pdev, Error **errp)
{
    RnicPciState *s = RNIC_PCI(pdev);
    int v;

    s->fd = -1;
    if (!link_open(s, errp)) {
        if (s->fd >= 0) {
            close(s->fd);
        }
        return;
    }
    memory_region_init(&s->msix, OBJECT(s), "rnic-msix", RNIC_MSIX_BAR_SIZE);
    pci_register_bar(pdev, RNIC_MSIX_BAR, PCI_BASE_ADDRESS_SPACE_MEMORY | PCI_BASE_ADDRESS_MEM_TYPE_64, &s->msix);
    if (msix_init(pdev, RNIC_NUM_CTX, &s->msix, RNIC_MSIX_BAR, RNIC_MSIX_TABLE_OFF, &s->msix, RNIC_MSIX_BAR,
                  RNIC_MSIX_PBA_OFF, 0, errp)) {
        close(s->fd);
        return;
    }
    /* every vector can fire: 7.2's msix_notify drops one not marked used */
    for (v = 0; v < RNIC_NUM_CTX; v++) {
        msix_vector_use(pdev, v);
    }
    if (pcie_endpoint_cap_init(pdev, 0x80) < 0) {
        error_setg(errp, "rnic-pci: no room for the PCIe capability");
        msix_uninit(pdev, &s->msix, &s->msix);
        close(s->fd);
        return;
    }
    memory_region_init_io(&s->bar0, OBJECT(s), &bar0_ops, s, "rnic-bar0", RNIC_BAR0_SIZE);
    /* a vCPU waits in a read with the BQL released: another vCPU's access is not re-entry */
    s->bar0.disable_reentrancy_guard = true;
    pci_register_bar(pdev, 0, PCI_BASE_ADDRESS_SPACE_MEMORY | PCI_BASE_ADDRESS_MEM_TYPE_64, &s->bar0);
    s->out = g_byte_array_new();
    qemu_mutex_init(&s->qlock);
    qemu_cond_init(&s->answered);
    event_notifier_init(&s->kick, false);
    qemu_thread_create(&s->thread, "rnic-link", link_thread, s, QEMU_THREAD_JOINABLE);
}

/* device_del or the machine's end: the NIC sees its host leave (and is power-cycled) */
static void rnic_pci_exit(PCIDevice *pdev)
{
    RnicPciState *s = RNIC_PCI(pdev);

    qatomic_set(&s->stop, true);
    event_notifier_set(&s->kick);
    qemu_mutex_unlock_iothread(); /* the link thread may be waiting for the BQL */
    qemu_thread_join(&s->thread);
    qemu_mutex_lock_iothread();
    s->dead = true;
    qemu_cond_broadcast(&s->answered);
    close(s->fd);
    event_notifier_cleanup(&s->kick);
    qemu_cond_destroy(&s->answered);
    qemu_mutex_destroy(&s->qlock);
    g_byte_array_unref(s->out);
    msix_uninit(pdev, &s->msix, &s->msix);
}

static Property rnic_pci_props[] = {
    DEFINE_PROP_STRING("socket", RnicPciState, socket_path),
    DEFINE_PROP_END_OF_LIST(),
};

static void rnic_pci_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->realize = rnic_pci_realize;
    k->exit = rnic_pci_exit;
    k->vendor_id = RNIC_VENDOR_ID;
    k->device_id = RNIC_DEVICE_ID;
    k->class_id = PCI_CLASS_NETWORK_OTHER;
    dc->desc = "RNIC (RoCEv2 RDMA NIC for Alveo cards) backed by an rnic-sim";
    set_bit(DEVICE_CATEGORY_NETWORK, dc->categories);
    device_class_set_props(dc, rnic_pci_props);
}

static const TypeInfo rnic_pci_info = {
    .name = TYPE_RNIC_PCI,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(RnicPciState),
    .class_init = rnic_pci_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { }
    },
};

static void rnic_pci_register(void)
{
    type_register_static(&rnic_pci_info);
}

type_init(rnic_pci_register)
