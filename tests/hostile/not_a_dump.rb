# a Ruby file
puts "hello"
