package control

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pulsewire/pulsewire/storage"
)

// Webhooks tell a client's backend that one of its measures ended or was
// deleted: the client registers endpoints (URLs) with the events they
// want, and each event is posted to them, signed with the endpoint's
// secret (see DeliverWebhooks and the webhook package).

// Limits of a webhook endpoint.
const (
	// MaxWebhookEndpoints is how many endpoints a client may hold.
	MaxWebhookEndpoints = 16
	// maxWebhookURL bounds an endpoint's URL, in bytes.
	maxWebhookURL = 2048
)

// webhookEvents are the events an endpoint may want.
var webhookEvents = []string{storage.EventMeasureEnded, storage.EventMeasureDeleted}

// WebhookEvents are the events an endpoint may want.
func WebhookEvents() []string { return slices.Clone(webhookEvents) }

// NewWebhookEndpoint is a client's request for an endpoint.
type NewWebhookEndpoint struct {
	URL    string
	Events []string
}

// ParseWebhookEndpoint reads the body of POST /webhook-endpoints:
// {"url": "https://...", "events": ["measure.ended", ...]}.
func ParseWebhookEndpoint(raw []byte) (NewWebhookEndpoint, error) {
	var (
		n NewWebhookEndpoint
		p problems
	)
	o, err := decodeBody(raw)
	if err != nil {
		return n, err
	}
	o.unknown(&p, "", "url", "events")
	u, isString := asString(o["url"])
	switch {
	case !o.given("url"):
		p.addf("url should not be empty")
	case !isString:
		p.addf("url must be a string")
	default:
		if err := checkWebhookURL(u); err != nil {
			p.addf("%s", err)
		}
		n.URL = u
	}
	items, isArray := asArray(o["events"])
	switch {
	case !o.given("events") || (isArray && len(items) == 0):
		p.addf("events should not be empty")
	case !isArray:
		p.addf("events must be an array")
	}
	for _, item := range items {
		e, _ := asString(item) // not a string: an unknown event
		n.Events = append(n.Events, e)
	}
	checkWebhookEvents(n.Events, &p)
	return n, p.err()
}

// checkWebhookEvents reports in p each event that is unknown or repeated.
func checkWebhookEvents(events []string, p *problems) {
	for i, e := range events {
		switch {
		case !slices.Contains(webhookEvents, e):
			p.addf("events.%d must be one of the following values: %s", i, strings.Join(webhookEvents, ", "))
		case slices.Contains(events[:i], e):
			p.addf("events.%d: %s is given twice", i, e)
		}
	}
}

// checkWebhookURL checks the form of an endpoint's URL: an absolute http
// or https URL with a host, without a user or password (they would show in
// every listing), of at most maxWebhookURL bytes.
func checkWebhookURL(s string) error {
	if len(s) > maxWebhookURL {
		return fmt.Errorf("url must be shorter than or equal to %d characters", maxWebhookURL)
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Hostname() == "":
		return errors.New("url must be an http or https URL with a host")
	case !validPort(u.Port()):
		return errors.New("url must have a port from 1 to 65535, or none")
	case u.User != nil:
		return errors.New("url must not hold a user name or password")
	}
	return nil
}

// validPort reports whether a URL's port is one a connection can be made
// to: none (the scheme's), or 1 to 65535.
func validPort(p string) bool {
	if p == "" {
		return true
	}
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}

// errPrivateAddress: an endpoint's host is, or resolves to, an address the
// server does not post to without --webhook-allow-private.
var errPrivateAddress = errors.New("a loopback, private, link-local, reserved, unspecified or multicast address")

// Ranges refused beside those netip names: addresses that are not a
// public host's (the IANA special-purpose registries), some of which reach
// the host itself or its provider's network.
var refused = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network": reaches the host itself on Linux
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT: inside a provider's network
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking, inside a network
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and the broadcast address
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("fec0::/10"),       // site-local, deprecated: private in effect
}

// IPv6 ranges that carry an IPv4 address, which a translator or relay on
// the way may deliver to. A well-known NAT64 address (how an IPv6-only
// host reaches IPv4 servers) and a 6to4 address are judged by the IPv4
// address inside; the rest have no use for a server's endpoint and are
// refused whole.
var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
	refused6  = []netip.Prefix{
		netip.MustParsePrefix("64:ff9b:1::/48"),  // NAT64 for a network's own use
		netip.MustParsePrefix("2001::/32"),       // Teredo
		netip.MustParsePrefix("::/96"),           // IPv4-compatible, deprecated
		netip.MustParsePrefix("::ffff:0:0:0/96"), // IPv4-translated (SIIT)
	}
)

// privateAddress reports whether a is one a webhook must not reach unless
// the operator allows it: a client's endpoint must not make the server call
// into its own machine or network, directly or through an IPv4 address
// inside an IPv6 one.
func privateAddress(a netip.Addr) bool {
	a = a.Unmap()
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64.Contains(a):
			return privateAddress(netip.AddrFrom4([4]byte(b[12:16])))
		case sixToFour.Contains(a):
			return privateAddress(netip.AddrFrom4([4]byte(b[2:6])))
		}
		for _, p := range refused6 {
			if p.Contains(a) {
				return true
			}
		}
	}
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return true
	}
	for _, p := range refused {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// resolveTimeout bounds the look-up of an endpoint's host at registration.
const resolveTimeout = 5 * time.Second

// checkWebhookHost refuses an endpoint whose host is, or resolves to, a
// private address (unless the server allows them). Deliveries check again
// the address they connect to: a host may resolve elsewhere later.
func (s *Service) checkWebhookHost(ctx context.Context, rawURL string) error {
	if s.allowPrivateWebhooks {
		return nil
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return invalidf("url must be an http or https URL with a host")
	}
	host := u.Hostname()
	if a, err := netip.ParseAddr(host); err == nil {
		if privateAddress(a) {
			return invalidf("url: %s is %s, which this server does not post to", host, errPrivateAddress)
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return invalidf("url: the host %s could not be resolved", host)
	}
	for _, a := range addrs {
		if privateAddress(a) {
			return invalidf("url: the host %s resolves to %s, %s, which this server does not post to", host, a.Unmap(), errPrivateAddress)
		}
	}
	return nil
}

// newWebhookSecret is a fresh signing secret: 32 random bytes.
func newWebhookSecret() string {
	b := make([]byte, 32)
	rand.Read(b)
	return "whsec_" + hex.EncodeToString(b)
}

// CreateWebhookEndpoint registers an endpoint of c, with a new secret,
// once its URL and events pass the rules of ParseWebhookEndpoint and its
// host the address rule; a client holds at most
// MaxWebhookEndpoints of them.
func (s *Service) CreateWebhookEndpoint(ctx context.Context, c storage.Client, n NewWebhookEndpoint) (storage.WebhookEndpoint, error) {
	var p problems
	if err := checkWebhookURL(n.URL); err != nil {
		p.addf("%s", err)
	}
	if len(n.Events) == 0 {
		p.addf("events should not be empty")
	}
	checkWebhookEvents(n.Events, &p)
	if err := p.err(); err != nil {
		return storage.WebhookEndpoint{}, err
	}
	if err := s.checkWebhookHost(ctx, n.URL); err != nil {
		return storage.WebhookEndpoint{}, err
	}
	w, err := s.db.CreateWebhookEndpoint(ctx, c, n.URL, n.Events, newWebhookSecret(), MaxWebhookEndpoints)
	if errors.Is(err, storage.ErrWebhookLimit) {
		return w, invalidf("a client holds at most %d webhook endpoints: delete one first", MaxWebhookEndpoints)
	}
	return w, err
}

// WebhookEndpoints lists c's endpoints.
func (s *Service) WebhookEndpoints(ctx context.Context, c storage.Client) ([]storage.WebhookEndpoint, error) {
	return s.db.WebhookEndpoints(ctx, c)
}

// WebhookEndpoint returns c's endpoint id; a malformed id is Invalid, and
// another client's endpoint is NotFound like a missing one.
func (s *Service) WebhookEndpoint(ctx context.Context, c storage.Client, id string) (storage.WebhookEndpoint, error) {
	id, err := parseID(id)
	if err != nil {
		return storage.WebhookEndpoint{}, err
	}
	return s.db.WebhookEndpoint(ctx, c, id)
}

// DeleteWebhookEndpoint removes c's endpoint id; its pending deliveries
// are not sent.
func (s *Service) DeleteWebhookEndpoint(ctx context.Context, c storage.Client, id string) error {
	id, err := parseID(id)
	if err != nil {
		return err
	}
	return s.db.DeleteWebhookEndpoint(ctx, c, id)
}

// WebhookDeliveries returns the delivery log of c's endpoint id.
func (s *Service) WebhookDeliveries(ctx context.Context, c storage.Client, id string) ([]storage.WebhookDelivery, error) {
	id, err := parseID(id)
	if err != nil {
		return nil, err
	}
	return s.db.WebhookDeliveries(ctx, c, id)
}

// RedeliverWebhook makes delivery of c's endpoint due now, with a fresh
// retry window, whatever its outcome so far.
func (s *Service) RedeliverWebhook(ctx context.Context, c storage.Client, endpoint, delivery string) (storage.WebhookDelivery, error) {
	endpoint, err := parseID(endpoint)
	if err != nil {
		return storage.WebhookDelivery{}, err
	}
	if delivery, err = parseID(delivery); err != nil {
		return storage.WebhookDelivery{}, err
	}
	d, err := s.db.RedeliverWebhook(ctx, c, endpoint, delivery)
	if err == nil {
		s.wakeWebhooks()
	}
	return d, err
}
