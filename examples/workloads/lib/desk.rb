# Desk: a small help-desk web application, the subject of the workloads.
#
# Customers, tickets with comments, sessions, a router of regular
# expressions, JSON / HTML / CSV rendering, an LRU of rendered cards,
# middleware lambdas, rolling latency metrics: the usual objects of a Ruby
# web process, driven by a simulated client.  Requests are planned from
# their index in a run (route, leak schedule) and a Random (the data), so a
# run with a fresh Random of the same seed does exactly the same work.
#
# Planted leaks, each switched on by name (App.new(leaks: [...])).  The
# lines that allocate a leak's objects carry "# @leak-site NAME"; the
# workload scripts read these markers for the truth.
#
#   audit          every request: 1 String into Desk::AuditTrail::LINES (Array constant)
#   subscriptions  every 4th: a Desk::Subscription (topic String, filters Array
#                  of 2 Strings) into $desk_subscriptions (global Hash)
#   memo           every search (1 in 6): Desk::Customer.@match_memo (class-level
#                  instance variable Hash) memoizes by an unbounded query: the key
#                  String, a Desk::Match Struct, its ids Array and label String
#   hooks          1 in 12: a lambda into Desk::Hooks.@after_reply (class-level
#                  Array); it captures the request, the comment, the session...
#   pinned         1 in 24: a dashboard, Desk::Überblick (title String, counts
#                  Hash, top-tags Array), into Desk::Überblick::PINNED
#   receipts       every request: a receipt, the response as an 8,000-character
#                  String (about 8 KB, not ASCII), into Desk::Receipts::BY_REQUEST
#                  (Hash constant, by request number).  That large: the
#                  allocation tracer's own table (an untraced DATA object) changes
#                  its memsize by up to half as it is rebuilt, and a growing
#                  memsize must stand well above that.

module Desk
  Ticket = Struct.new(:id, :subject, :state, :priority, :tags, :customer_id, :comments)
  Comment = Struct.new(:author_id, :text, :seq)
  Session = Struct.new(:sid, :customer_id, :csrf, :created, :last_seen, :flash)
  Match = Struct.new(:query, :ids, :label)
  Response = Struct.new(:status, :headers, :body)

  STATES = %w[new open pending solved closed].freeze
  PLANS = { free: Rational(0), team: Rational(1900, 100), business: Rational(4999, 100) }.freeze
  TAGS = %w[billing login mobile api export refund invoice sso webhook latency
            import privacy locale search].freeze
  FIRST = %w[Ada Grace Linus Zoë Małgorzata Søren Amélie Kenji Nnamdi Ingrid Chloé José].freeze
  LAST = %w[Lovelace Hopper Torvalds Müller Kowalska Kierkegaard Poulain Sato Okafor Bergström].freeze
  WORDS = %w[cannot login after password reset invoice shows wrong vat export to csv times out
             webhook retries twice mobile app crashes on upload sso redirect loops refund not
             received search ignores accents dark mode contrast api rate limit].freeze
  COMMENTS_PER_TICKET = 5

  # --------------------------------------------------------------- models

  class Customer
    attr_reader :id, :name, :email, :plan, :external_id, :prefs

    def initialize(id, name, email, plan, external_id, prefs)
      @id = id
      @name = name
      @email = email
      @plan = plan
      @external_id = external_id
      @prefs = prefs
    end

    # LEAK HOLDER memo: query => Match, never evicted
    @match_memo = {}

    class << self
      attr_reader :match_memo

      def search(customers, query, memo)
        return build_match(customers, query) unless memo

        @match_memo[query] ||                    # a hit never happens: every query is new
          (@match_memo[query] = build_match(customers, query)) # @leak-site memo
      end

      def build_match(customers, query)
        words = query.downcase.split(/[^[:alnum:]]+/).reject(&:empty?)
        ids = customers.select { |c| words.any? { |w| c.name.downcase.include?(w) } }.map(&:id).first(5) # @leak-site memo
        Match.new(query, ids, "#{ids.size} customers match #{words.first.inspect}") # @leak-site memo
      end
    end
  end

  # A client's subscription to a ticket's replies.
  class Subscription
    attr_reader :topic, :filters, :customer_id, :since

    def initialize(customer, ticket, seq)
      @topic = "tickets.#{ticket.id}.replies" # @leak-site subscriptions
      @filters = [customer.plan.to_s, "priority>=#{ticket.priority}"] # @leak-site subscriptions
      @customer_id = customer.id
      @since = seq
    end
  end

  # The dashboard of a request: counts per state, top tags.
  class Überblick
    # LEAK HOLDER pinned: dashboards someone "pinned", never unpinned
    PINNED = []

    attr_reader :title, :counts, :top_tags, :solved_ratio

    def initialize(tickets, seq)
      @title = "Überblick über #{tickets.size} Tickets (##{seq})" # @leak-site pinned
      @counts = tickets.group_by(&:state).transform_values(&:size) # @leak-site pinned
      @top_tags = tickets.flat_map(&:tags).tally.max_by(3) { |_tag, n| n }.map(&:first) # @leak-site pinned
      @solved_ratio = @counts.fetch("solved", 0).fdiv([tickets.size, 1].max)
    end

    def render
      rows = @counts.sort.map { |state, n| format("%-8s %5d", state, n) }
      ([@title, "solved #{(@solved_ratio * 100).round(1)} %", "top: #{@top_tags.join(', ')}"] + rows).join("\n")
    end
  end

  module AuditTrail
    # LEAK HOLDER audit: one line per request, never trimmed
    LINES = []
  end

  module Receipts
    # LEAK HOLDER receipts: request number => receipt of the response
    CHARS = 8000
    BY_REQUEST = {}
  end

  # Callbacks run after a reply; registering one per comment is the bug.
  class Hooks
    # LEAK HOLDER hooks
    @after_reply = []

    class << self
      attr_reader :after_reply

      def add(hook)
        @after_reply << hook
      end

      def run(resp)
        @after_reply.last(3).each { |h| h.call(resp) }
      end
    end
  end

  # LEAK HOLDER subscriptions: object_id of the Subscription => Subscription
  $desk_subscriptions = {}

  # ------------------------------------------------------- infrastructure

  # A least-recently-used cache of a fixed number of entries.
  class LRU
    def initialize(capacity)
      @capacity = capacity
      @entries = {}
    end

    def size
      @entries.size
    end

    def fetch(key)
      if @entries.key?(key)
        value = @entries.delete(key)
        @entries[key] = value
        return value
      end
      value = yield
      @entries[key] = value
      @entries.shift while @entries.size > @capacity
      value
    end
  end

  # Sessions expire a fixed number of requests after they were created.
  class Sessions
    def initialize(ttl)
      @ttl = ttl
      @by_sid = {}
    end

    def size
      @by_sid.size
    end

    def open(customer_id, seq, rng)
      sid = format("%016x", rng.rand(1 << 62))
      csrf = [rng.bytes(12)].pack("m0")
      @by_sid[sid] = Session.new(sid, customer_id, csrf, seq, seq, nil)
    end

    def pick(rng)
      return nil if @by_sid.empty?

      @by_sid.values[rng.rand(@by_sid.size)]
    end

    def expire(seq)
      @by_sid.delete_if { |_sid, s| s.created < seq - @ttl }
    end
  end

  # Latencies of the last requests (replaced at each run).
  class Metrics
    attr_reader :count

    def initialize(window)
      @window = window
      @latencies = []
      @by_route = Hash.new(0)
      @count = 0
    end

    def record(route, ms)
      @latencies << ms
      @latencies.shift if @latencies.size > @window
      @by_route[route] += 1
      @count += 1
    end

    def p95
      return 0.0 if @latencies.empty?

      @latencies.sort[(@latencies.size * 0.95).floor.clamp(0, @latencies.size - 1)]
    end
  end

  class Request
    attr_reader :seq, :index, :verb, :path, :params, :sid, :env

    def initialize(env, seq, index)
      @env = env
      @seq = seq
      @index = index
      @verb = env["REQUEST_METHOD"]
      @path = env["PATH_INFO"]
      @params = parse_query(env["QUERY_STRING"])
      @sid = env["HTTP_COOKIE"].to_s[/sid=(\h+)/, 1]
    end

    private

    def parse_query(qs)
      qs.to_s.split("&").to_h do |pair|
        k, v = pair.split("=", 2)
        [unescape(k), unescape(v.to_s)]
      end
    end

    def unescape(s)
      s.tr("+", " ").gsub(/%(\h\h)/) { Regexp.last_match(1).hex.chr }.force_encoding(Encoding::UTF_8)
    end
  end

  # ------------------------------------------------------------------ app

  class App
    ROUTES = [
      ["GET", %r{\A/tickets/(\d+)\z}, :show_ticket],
      ["GET", %r{\A/tickets\z}, :list_tickets],
      ["GET", %r{\A/customers/search\z}, :search_customers],
      ["POST", %r{\A/tickets/(\d+)/comments\z}, :post_comment],
      ["GET", %r{\A/dashboard\z}, :dashboard],
      ["GET", %r{\A/export/(\w+)\.csv\z}, :export_csv],
    ].freeze

    MIDDLEWARE = [
      ->(req, resp) { resp.headers["x-request-id"] = format("req-%08d", req.seq) },
      ->(_req, resp) { resp.headers["content-length"] = resp.body.bytesize.to_s },
      ->(req, resp) { resp.headers["vary"] = "cookie" if req.sid },
    ].freeze

    attr_reader :customers, :tickets, :articles, :cards, :sessions, :metrics

    # scale sizes the "database"; leaks: names of the planted leaks to run.
    def initialize(scale:, rng:, leaks: [])
      unknown = leaks - %i[audit subscriptions memo hooks pinned receipts]
      raise ArgumentError, "unknown leaks #{unknown}" unless unknown.empty?

      @leaks = leaks.to_h { |l| [l, true] }
      @seq = 0
      sc = ->(n) { [(n * scale).round, 1].max }
      @customers = Array.new(sc.call(60)) { |i| make_customer(i, rng) }
      @tickets = Array.new(sc.call(150)) { |i| make_ticket(i, rng) }
      @articles = Array.new(sc.call(12)) do |i|
        ["Article #{i}: #{WORDS.sample(3, random: rng).join(' ')}",
         Array.new(8 + rng.rand(24)) { WORDS.sample(12, random: rng).join(" ") }.join(".\n")]
      end.to_h
      @cards = LRU.new(sc.call(20))
      @sessions = Sessions.new(40)
      @metrics = Metrics.new(100)
    end

    # Runs n requests of the simulated client.
    def run(n, rng)
      @metrics = Metrics.new(100)
      n.times { |j| call(client_env(j, rng), j, rng) }
      @metrics.count
    end

    private

    def make_customer(i, rng)
      first = FIRST[rng.rand(FIRST.size)]
      last = LAST[rng.rand(LAST.size)]
      Customer.new(i, "#{first} #{last}", "#{first.downcase}.#{last.downcase}#{i}@mail.example",
                   PLANS.keys[i % PLANS.size], (1 << 64) + rng.rand(1 << 40),
                   { "tz" => %w[UTC Europe/Berlin Asia/Tokyo][i % 3], "lang" => %w[en de ja fr][i % 4],
                     "notify" => %w[email push].take(1 + (i % 2)) })
    end

    def make_ticket(i, rng)
      comments = Array.new(COMMENTS_PER_TICKET) do |k|
        Comment.new(rng.rand(@customers.size), WORDS.sample(6 + rng.rand(30), random: rng).join(" "), -k)
      end
      Ticket.new(i, WORDS.sample(4 + rng.rand(4), random: rng).join(" ").capitalize,
                 STATES[rng.rand(STATES.size)], 1 + rng.rand(4), TAGS.sample(1 + rng.rand(3), random: rng),
                 rng.rand(@customers.size), comments)
    end

    # The simulated client: request j of a run.
    def client_env(j, rng)
      id = rng.rand(@tickets.size)
      path, query = case j % 6
                    when 0, 4 then ["/tickets/#{id}", "fields=subject,state&expand=comments"]
                    when 1 then ["/tickets", "page=#{rng.rand(20)}&tag=#{TAGS[rng.rand(TAGS.size)]}"]
                    when 2 then ["/customers/search", "q=#{FIRST[rng.rand(FIRST.size)]}+%23#{j}-#{rng.rand(1 << 20)}"]
                    when 3 then ["/tickets/#{id}/comments", "text=Thanks%2C+still+seeing+it+on+#{rng.rand(100)}"]
                    else j % 12 == 5 ? ["/dashboard", "window=7d"] : ["/export/#{STATES[rng.rand(STATES.size)]}.csv", ""]
                    end
      { "REQUEST_METHOD" => j % 6 == 3 ? "POST" : "GET", "PATH_INFO" => path, "QUERY_STRING" => query,
        "HTTP_COOKIE" => j.odd? ? "sid=#{format('%016x', rng.rand(1 << 62))}; theme=dark" : nil,
        "HTTP_USER_AGENT" => "DeskClient/2.1 (run #{j})" }
    end

    def call(env, j, rng)
      t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      req = Request.new(env, @seq += 1, j)
      session = @sessions.pick(rng) if req.sid
      session ||= @sessions.open(rng.rand(@customers.size), req.seq, rng) if j % 5 == 0
      session.last_seen = req.seq if session
      @sessions.expire(req.seq) if j % 10 == 9
      handler, match = route(req)
      resp = handler ? send(handler, req, match, session, rng) : Response.new(404, {}, "not found")
      MIDDLEWARE.each { |mw| mw.call(req, resp) }
      Hooks.run(resp)
      ms = (Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0) * 1000.0
      @metrics.record(handler || :not_found, ms)
      AuditTrail::LINES << format("%-4s %s -> %d (%.2f ms)", req.verb, req.path, resp.status, ms) if @leaks[:audit] # @leak-site audit
      if @leaks[:receipts]
        Receipts::BY_REQUEST[req.seq] = format("%-*.*s", Receipts::CHARS, Receipts::CHARS, "Quittung №#{req.seq} · #{resp.status} · #{resp.body}") # @leak-site receipts
      end
      subscribe(req, rng) if @leaks[:subscriptions] && j % 4 == 1
      resp
    end

    # (No `return` from inside the block: ruby.wasm 3.3 keeps the throw
    # object of every such non-local return, and what it carries, reachable
    # from its machine context.)
    def route(req)
      found = nil
      ROUTES.each do |verb, re, handler|
        next if found || verb != req.verb

        m = re.match(req.path)
        found = [handler, m] if m
      end
      found
    end

    def subscribe(req, rng)
      customer = @customers[rng.rand(@customers.size)]
      ticket = @tickets[req.seq % @tickets.size]
      sub = Subscription.new(customer, ticket, req.seq) # @leak-site subscriptions
      $desk_subscriptions[sub.object_id] = sub
    end

    # ------------------------------------------------------------ handlers

    def show_ticket(req, match, _session, _rng)
      t = @tickets[match[1].to_i]
      card = @cards.fetch("ticket:#{t.id}") do
        format("%-6d|%-40.40s|%-8s|p%d|%-24.24s", t.id, t.subject, t.state, t.priority, t.tags.join(","))
      end
      fields = req.params.fetch("fields", "").split(",")
      doc = { "card" => card, "ticket" => t.to_h.slice(*fields.map(&:to_sym)).transform_keys(&:to_s) }
      doc["comments"] = t.comments.map { |c| { "author" => @customers[c.author_id].name, "text" => c.text } }
      Response.new(200, { "content-type" => "application/json" }, JSON.generate(doc))
    end

    def list_tickets(req, _match, _session, _rng)
      page = req.params.fetch("page", "0").to_i
      tag = req.params["tag"]
      rows = @tickets[(page * 20) % @tickets.size, 20].select { |t| tag.nil? || t.tags.include?(tag) || t.priority > 2 }
      html = +"<table class=\"tickets\">\n"
      rows.each do |t|
        html << "<tr data-id=\"#{t.id}\"><td>#{t.subject.gsub('<', '&lt;')}</td><td>#{t.state}</td>" \
                "<td>#{t.tags.map { |g| "<span>#{g}</span>" }.join}</td></tr>\n"
      end
      html << "</table>\n"
      Response.new(200, { "content-type" => "text/html; charset=utf-8" }, html)
    end

    def search_customers(req, _match, _session, rng)
      window = @customers[rng.rand(@customers.size), 40]
      m = Customer.search(window, req.params.fetch("q", ""), @leaks[:memo])
      Response.new(200, { "content-type" => "application/json" },
                   JSON.generate({ "query" => m.query, "ids" => m.ids, "label" => m.label }))
    end

    def post_comment(req, match, session, _rng)
      ticket = @tickets[match[1].to_i]
      comment = Comment.new(session ? session.customer_id : 0, req.params.fetch("text", ""), req.seq)
      ticket.comments << comment
      ticket.comments.shift while ticket.comments.size > COMMENTS_PER_TICKET
      if session
        session.flash = "Comment added to ticket #{ticket.id}"
      end
      if @leaks[:hooks] && req.index % 12 == 3
        note = "notify watchers of ticket #{ticket.id}" # @leak-site hooks
        Hooks.add(->(resp) { resp.headers["x-notified"] = note }) # @leak-site hooks
      end
      Response.new(201, { "location" => "/tickets/#{ticket.id}" }, "")
    end

    def dashboard(req, _match, _session, rng)
      sample = @tickets[rng.rand(@tickets.size), 60]
      board = Überblick.new(sample, req.seq) # @leak-site pinned
      Überblick::PINNED << board if @leaks[:pinned] && req.index % 24 == 5
      Response.new(200, { "content-type" => "text/plain; charset=utf-8" }, board.render)
    end

    def export_csv(_req, match, _session, rng)
      state = match[1]
      counter = "#{state}_exported".to_sym
      lines = @tickets[rng.rand(@tickets.size), 50].select { |t| t.state == state }.map do |t|
        [t.id, t.subject.tr(",", " "), t.priority, format("%.2f", PLANS.values[t.id % 3] * t.priority)].join(",")
      end
      body = (["id,subject,priority,amount"] + lines).join("\n")
      Response.new(200, { "content-type" => "text/csv", "x-counter" => counter.to_s }, body)
    end
  end
end
