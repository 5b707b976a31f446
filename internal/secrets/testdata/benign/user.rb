class User < ApplicationRecord
  has_secure_password
  attr_accessor :password, :token

  def self.authenticate(email, password)
    find_by(email: email)&.authenticate(password)
  end
end

SECRET_KEY_BASE = ENV["SECRET_KEY_BASE"]
API_KEY = ENV.fetch("API_KEY")
